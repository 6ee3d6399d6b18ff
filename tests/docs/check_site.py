"""The site builds with warnings as errors (`scripts/docs.sh -W --keep-going`), into a temporary
folder and without executing the tutorials (docs/notebooks/* tests execute them), and its
configuration page lists every key of `normdyn config-reference`."""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import installed

source = installed.SOURCE
with tempfile.TemporaryDirectory(prefix="normdyn-docs-site-") as tmp:
    out = pathlib.Path(tmp) / "html"
    env = dict(os.environ, NORMDYN_DOCS_SKIP_BUILD="1", NORMDYN_DOCS_OUT=str(out))
    p = subprocess.run(["bash", str(source / "scripts" / "docs.sh"), "-W", "--keep-going",
                        "-D", "nbsphinx_execute=never"], env=env, cwd=source, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    print(p.stdout)
    if p.returncode != 0:
        sys.exit(f"scripts/docs.sh: exit code {p.returncode}")
    config = (out / "reference" / "config.html").read_text()
    keys = re.findall(r"^\| `([a-z_]+\.[a-z_0-9]+)` \|", subprocess.run(
        [os.environ["NORMDYN_BINARY"], "config-reference"], capture_output=True, text=True, check=True).stdout, re.M)
    missing = [k for k in keys if f"<code class=\"docutils literal notranslate\"><span class=\"pre\">{k}</span></code>" not in config]
    if missing:
        sys.exit(f"the site's configuration page misses {missing}")
    print(f"the site built; its configuration page lists all {len(set(keys))} keys")
