"""Every public name of the Python package is documented: each name of `normdyn.__all__` is in the
members of docs/reference/python.md's `automodule:: normdyn` and named in its table, and has a
docstring; each function and class of `normdyn.plots.__all__` has a docstring (the page documents
the module's members from them) and each constant of it is named on the page. A new public name
without documentation fails here."""
import inspect
import pathlib
import re
import sys
import tempfile

import installed

SOURCE = installed.SOURCE
page = (SOURCE / "docs" / "reference" / "python.md").read_text()
failures = []

with tempfile.TemporaryDirectory(prefix="normdyn-docs-python-") as tmp:
    sys.path.insert(0, str(installed.install(pathlib.Path(tmp))))
    import normdyn
    from normdyn import plots

    members = re.search(r"automodule:: normdyn\n\s+:members: ([^\n]+)", page)
    listed = {m.strip() for m in members.group(1).split(",")} if members else set()
    if not members:
        failures.append("docs/reference/python.md: no `automodule:: normdyn` with :members:")
    for name in normdyn.__all__:
        obj = getattr(normdyn, name)
        if name not in listed:
            failures.append(f"normdyn.{name}: not among the :members: of `automodule:: normdyn`")
        if f"`{name}" not in page:
            failures.append(f"normdyn.{name}: not named in the table of docs/reference/python.md")
        if not (inspect.getdoc(obj) or "").strip():
            failures.append(f"normdyn.{name}: no docstring")
    if not re.search(r"automodule:: normdyn\.plots\n\s+:members:", page):
        failures.append("docs/reference/python.md: no `automodule:: normdyn.plots` with :members:")
    for name in plots.__all__:
        obj = getattr(plots, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            if not (inspect.getdoc(obj) or "").strip():
                failures.append(f"normdyn.plots.{name}: no docstring")
        elif f"`{name}`" not in page:
            failures.append(f"normdyn.plots.{name}: a constant not named on docs/reference/python.md")

for f in failures:
    print(f)
print(f"{len(failures)} undocumented name(s)" if failures else
      f"every public name is documented ({len(normdyn.__all__)} in normdyn, {len(plots.__all__)} in normdyn.plots)")
sys.exit(1 if failures else 0)
