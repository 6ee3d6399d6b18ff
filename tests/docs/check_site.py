"""The site builds with warnings as errors (`scripts/docs.sh -W --keep-going`), into a temporary
folder and without executing the tutorials (docs/notebooks/* tests execute them), and its
configuration page lists every key of `normdyn config-reference`; it needs no network (no page
loads a script from another site; MathJax is served from _static/mathjax); the gallery shows every
figure its build drew."""
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
    remote = sorted({str(page.relative_to(out)) for page in out.rglob("*.html")
                     if re.search(r"<script[^>]+src=\"(https?:)?//", page.read_text(errors="replace"))})
    if remote:
        sys.exit(f"pages load scripts from the network: {remote[:5]}")
    model = (out / "explanation" / "model.html").read_text()  # a page of equations
    if "_static/mathjax/MathJax.js" not in model or not (out / "_static/mathjax/MathJax.js").exists() \
            or not (out / "_static/mathjax/jax/output/SVG/fonts/TeX").is_dir():
        sys.exit("MathJax is not served from the site (_static/mathjax)")
    sys.path.insert(0, str(source / "docs" / "_ext"))
    import normdyn_gallery
    gallery = (out / "gallery.html").read_text()
    for name, *_ in normdyn_gallery.ENTRIES:
        image = re.search(rf'src="(_images/{name}\.(png|gif))"', gallery)
        if not image or not (out / image.group(1)).stat().st_size > 1000:
            sys.exit(f"the gallery lacks its figure {name}")
    print(f"the site built; its configuration page lists all {len(set(keys))} keys; MathJax and the "
          f"{len(normdyn_gallery.ENTRIES)} gallery figures are in the site")
