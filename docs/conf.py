"""Sphinx configuration of normdyn's documentation site: `bash scripts/docs.sh` builds it into
build/docs/html. Everything comes from Debian's packages (python3-sphinx, python3-myst-parser,
python3-nbsphinx, furo, pandoc); see scripts/install-deps.sh.

scripts/docs.sh installs the built Python package into a temporary prefix and puts it on
PYTHONPATH (autodoc and the tutorials import it), and names the built program in NORMDYN_BINARY
(the command-line and configuration reference pages are its own output, generated here).
"""
import os
import pathlib
import re
import sys

DOCS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "normdyn"
author = "the normdyn developers"
copyright = "the normdyn developers (BSD-3-Clause)"
_cff = (DOCS.parent / "CITATION.cff").read_text()
release = re.search(r"^version:\s*(\S+)", _cff, re.M).group(1)
version = release

extensions = [
    "myst_parser",
    "nbsphinx",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "normdyn_docs",
    "normdyn_gallery",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "_generated", "**.ipynb_checkpoints"]

# MyST: $...$ and $$...$$ for the model's equations, ::: fences, GitHub-style anchors for
# links such as [crash safety](../developer/crash-safety.md#killed-runs).
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 4

# Docstrings are written as plain text with `code` in backticks: show it as code.
default_role = "code"
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True}

# The tutorials are executed at every build; their outputs are never committed.
nbsphinx_execute = "always"
nbsphinx_timeout = 600
nbsphinx_kernel_name = "python3"
nbsphinx_allow_errors = False
# Each notebook runs in a fresh scratch folder (its files do not land in the source tree).
nbsphinx_execute_arguments = []
# No require.js or widget scripts from a CDN: the site works offline (progress widgets of the
# tutorials then show as text).
nbsphinx_requirejs_path = ""
nbsphinx_widgets_path = ""
nbsphinx_prolog = """
.. note:: This page is a Jupyter notebook (``docs/{{ env.doc2path(env.docname, base=None) }}``),
   executed when the site was built.
"""

# Equations render with no network: MathJax 2.7 from Debian's libjs-mathjax, the parts its SVG
# output needs copied into the site (_static/mathjax, about 2.5 MB), instead of Sphinx's default
# (MathJax 3 from a CDN). SVG output draws its glyphs from JavaScript: no web fonts to serve.
MATHJAX_SOURCE = pathlib.Path(os.environ.get("NORMDYN_MATHJAX", "/usr/share/javascript/mathjax"))
MATHJAX_PARTS = ("MathJax.js", "config/TeX-AMS_SVG.js", "extensions", "jax/input/TeX", "jax/element",
                 "jax/output/SVG/config.js", "jax/output/SVG/jax.js", "jax/output/SVG/autoload",
                 "jax/output/SVG/fonts/TeX")
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS_SVG"
mathjax2_config = {
    "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]], "processEscapes": True,
                "processEnvironments": True},
    "SVG": {"font": "TeX"},
    "showMathMenu": False,
    "messageStyle": "none",
}

html_theme = "furo"
html_title = f"normdyn {release}"
html_static_path = []
html_last_updated_fmt = None
# Links in pages that point at files of the repository outside docs/ (source files, scripts)
# are written as code, not links; nothing here needs the network at build time.


def _copy_mathjax(app, exception):
    """Copies Debian's MathJax (the parts of MATHJAX_PARTS) into the site's _static/mathjax."""
    if exception is not None or app.builder.format != "html":
        return
    import shutil
    if not (MATHJAX_SOURCE / "MathJax.js").exists():
        raise RuntimeError(f"{MATHJAX_SOURCE}/MathJax.js not found: install libjs-mathjax (bash scripts/install-deps.sh)")
    target = pathlib.Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        src, dst = MATHJAX_SOURCE / part, target / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)


def setup(app):
    app.connect("build-finished", _copy_mathjax)
