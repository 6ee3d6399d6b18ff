"""The reference pages generated at the site's build cover the program, and the hand-written pages
name only keys that exist.

* every command and subcommand of `normdyn --help` gets a section with its help text on the
  command-line page (docs/_ext/normdyn_docs.py, the code the site's build runs);
* the configuration page is generated from `normdyn config-reference`, whose table lists every key
  that `normdyn.config_reference()` lists, each once, with a type and a meaning;
* every configuration key written in backticks on a page (`model.beta`, `solver.method = ...`) is a
  key of that reference (file names and the example of a misspelt key aside): a renamed or removed
  key cannot linger in the documentation.
"""
import os
import pathlib
import re
import sys
import tempfile

import installed

SOURCE = installed.SOURCE
sys.path.insert(0, str(SOURCE / "docs" / "_ext"))
import normdyn_docs  # noqa: E402

failures = []


def check(ok, message):
    if not ok:
        failures.append(message)


def pages():
    return [SOURCE / "README.md", *sorted((SOURCE / "docs").rglob("*.md"))]


with tempfile.TemporaryDirectory(prefix="normdyn-docs-reference-") as tmp:
    sys.path.insert(0, str(installed.install(pathlib.Path(tmp))))
    import normdyn

    # The command line.
    top = normdyn_docs.subcommands(normdyn_docs.output(["--help"]))
    check({"run", "analyze", "plot", "sweep", "ensemble", "reproduce"} <= set(top),
          f"`normdyn --help` lists {top}: the parser of the help text lost commands")
    commands = normdyn_docs.commands()
    cli = normdyn_docs.cli_markdown()
    for name in top:
        if name != "help":
            check(f"`normdyn {name}`" in cli, f"the command-line page has no section for `normdyn {name}`")
    for path, text in commands:
        check("Usage: normdyn " + " ".join(path) in text, f"normdyn {' '.join(path)} --help: no usage line")
    check(any(len(p) == 2 for p, _ in commands), "no nested command found (normdyn study ...)")
    check("{normdyn-cli}" in (SOURCE / "docs/reference/cli.md").read_text(),
          "docs/reference/cli.md does not generate the commands (```{normdyn-cli}```)")

    # The configuration keys.
    table = normdyn_docs.output(["config-reference"])
    keys_table = table.split("\n\n")[0]                     # the keys; the methods' table follows
    rows = re.findall(r"^\| `([a-z_]+\.[a-z_0-9]+)` \| ([^|]+) \|", keys_table, re.M)
    listed = [k for k, _ in rows]
    python_keys = [e["key"] for e in normdyn.config_reference()]
    check(len(listed) == len(set(listed)), "normdyn config-reference lists a key twice")
    check(set(listed) == set(python_keys),
          f"normdyn config-reference and normdyn.config_reference() differ: "
          f"{sorted(set(listed) ^ set(python_keys))}")
    for entry in normdyn.config_reference():
        check(entry["type"] and entry["description"], f"{entry['key']}: no type or no description")
    check("{normdyn-output} config-reference" in (SOURCE / "docs/reference/config.md").read_text(),
          "docs/reference/config.md does not generate the keys from `normdyn config-reference`")

    # Keys named on the pages exist.
    sections = sorted({k.split(".")[0] for k in python_keys})
    named = re.compile(r"`(?:--set )?((?:" + "|".join(sections) + r")\.[a-z_0-9]+)(?=[ `=:])")
    for page in pages():
        for number, line in enumerate(page.read_text().splitlines(), 1):
            for key in named.findall(line):
                if re.search(r"\.(md|h5|toml|py|json|png|pdf|csv|cpp|hpp)$", key) or "unknown key" in line:
                    continue                             # a file name; an example of a misspelt key
                check(key in python_keys, f"{page.relative_to(SOURCE)}:{number}: `{key}` is not a configuration key")

for f in failures:
    print(f)
print(f"{len(failures)} problem(s)" if failures else "the reference covers the program")
sys.exit(1 if failures else 0)
