"""Sphinx directives that write the reference pages from the program itself, at build time, so that
new commands, options and configuration keys appear without editing the pages.

    ```{normdyn-cli}
    ```                                  a section per command with its `--help` (the commands are
                                         those `normdyn --help` lists; put it last on its page)

    ```{normdyn-output} config-reference
    :markdown:
    ```                                  the standard output of `normdyn ARGS`, as Markdown or as text

    ```{normdyn-toctree}
    :caption: Guides
    guide/*
    ```                                  a glob toctree of the pages that exist: a pattern that matches
                                         nothing (a folder other contributors have not filled yet, a page
                                         another branch adds) is left out without a warning

The program is $NORMDYN_BINARY, else `normdyn` on PATH, else build/app/normdyn of the source tree.
The functions below are also imported by the documentation tests (tests/docs/).
"""
from __future__ import annotations

import inspect
import os
import pathlib
import re
import shlex
import shutil
import subprocess

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util import docname_join
from sphinx.util.docutils import SphinxDirective
from sphinx.util.matching import patfilter

SOURCE = pathlib.Path(__file__).resolve().parents[2]


def binary() -> str:
    """The normdyn program the pages are generated from."""
    named = os.environ.get("NORMDYN_BINARY")
    if named:
        return named
    found = shutil.which("normdyn")
    if found:
        return found
    built = SOURCE / "build" / "app" / "normdyn"
    if built.exists():
        return str(built)
    raise RuntimeError("normdyn program not found: set NORMDYN_BINARY, put normdyn on PATH, or build build/app/normdyn")


def output(args: list[str]) -> str:
    """The standard output of `normdyn ARGS` (argv[0] is "normdyn", so that usage lines read as a user
    types them); a non-zero exit is an error naming the command."""
    p = subprocess.run(["normdyn", *args], executable=binary(), capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "100"})
    if p.returncode != 0:
        raise RuntimeError(f"normdyn {shlex.join(args)}: exit code {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def subcommands(help_text: str) -> list[str]:
    """The names listed under "Subcommands:" in a CLI11 help text."""
    names, inside = [], False
    for line in help_text.splitlines():
        if line.startswith("Subcommands:"):
            inside = True
        elif inside and re.match(r"^  \S", line):
            names.append(line.split()[0])
        elif inside and line and not line.startswith(" "):
            inside = False
    return names


def commands(prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """(command path, help text) of every command and subcommand, depth first, in the program's order."""
    result = []
    top = output([*prefix, "--help"])
    for name in subcommands(top):
        if not prefix and name == "help":
            continue
        path = (*prefix, name)
        text = output([*path, "--help"])
        result.append((path, text))
        result.extend(commands(path))
    return result


def cli_markdown() -> str:
    """One section per command and subcommand, each with its help text."""
    lines = []
    for path, text in commands():
        title = "normdyn " + " ".join(path)
        lines += [f"{'#' * (1 + len(path))} `{title}`", "", "```text", text.rstrip(), "```", ""]
    return "\n".join(lines)


class _MarkdownDirective(SphinxDirective):
    def _parse(self, text: str, headings: bool = False):
        # With headings, MyST attaches the sections to the page's own section tree (the directive
        # then stands at the top level of its page, after the text that introduces it).
        container = nodes.container()
        self.state.nested_parse(StringList(text.splitlines(), source=f"normdyn {self.name}"), self.content_offset,
                                container, match_titles=headings)
        return container.children


class NormdynCli(_MarkdownDirective):
    """Every command's help text, generated from `normdyn help`."""
    has_content = False

    def run(self):
        return self._parse(cli_markdown(), headings=True)


class NormdynOutput(_MarkdownDirective):
    """The output of `normdyn ARGS`: Markdown (`:markdown:`) parsed into the page, else a text block."""
    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"markdown": lambda arg: True}

    def run(self):
        text = output(shlex.split(self.arguments[0]))
        if "markdown" in self.options:
            return self._parse(text)
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


# ---- Docstrings of the top-level package are plain text (they read well in help() and in a
# notebook's "?"): `name: text` paragraphs with indented continuation lines, code indented under a
# sentence. Shown as reST, those would be broken definition lists and block quotes, so they are
# rewritten for autodoc: a paragraph naming parameters of the function becomes `:param:` fields,
# other such paragraphs are joined, indented code after a blank line becomes a Python code block,
# and a `*` outside backticks is escaped.

_LABEL = re.compile(r"^([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*): (.*)$")


def _escape_stars(line: str) -> str:
    parts = line.split("`")
    return "`".join(p.replace("*", "\\*") if i % 2 == 0 else p for i, p in enumerate(parts))


def _split_labels(text: str, parameters: set[str]) -> list[str]:
    """"config, set: as for run(). axes: ..." -> one paragraph per parameter label."""
    pieces, start = [], 0
    for m in re.finditer(r"(?<=\. )([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*): ", text):
        if all(n in parameters for n in m.group(1).split(", ")):
            pieces.append(text[start:m.start()].rstrip())
            start = m.start()
    return pieces + [text[start:]]


def plain_docstring_to_rst(lines: list[str], parameters: set[str]) -> list[str]:
    """The reST of a plain-text docstring; the parameter fields are gathered into one list where the
    first of them stands."""
    out: list[str] = []
    fields: list[str] = []
    fields_at = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("    ") and (not out or not out[-1].strip()):
            # An indented block after a blank line: example code.
            block = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                block.append(lines[i][4:])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += [".. code-block:: python", ""] + ["   " + b if b else "" for b in block] + [""]
            continue
        paragraph = [line.strip()]
        i += 1
        # A paragraph goes on over its indented continuation lines and over plain lines that do not
        # start a `name: text` label of their own.
        while (i < len(lines) and lines[i].strip() and line.strip()
               and (lines[i].startswith("  ") or not _LABEL.match(lines[i]))):
            paragraph.append(lines[i].strip())
            i += 1
        for text in _split_labels(_escape_stars(" ".join(paragraph)), parameters):
            label = _LABEL.match(text)
            names = label.group(1).split(", ") if label else []
            if names and all(n in parameters for n in names):
                if fields_at is None:
                    fields_at = len(out)
                fields += [f":param {n}: {label.group(2)}" for n in names]
            else:
                if text and out and out[-1].strip():
                    out.append("")
                out.append(text)
    if fields:
        out[fields_at:fields_at] = ["", *fields, ""]
    return out


def _process_docstring(app, what, name, obj, options, lines):
    if name != "normdyn" and (not name.startswith("normdyn.") or name.startswith("normdyn.plots")):
        return
    try:
        parameters = set(inspect.signature(obj).parameters) if callable(obj) else set()
    except (TypeError, ValueError):
        parameters = set()
    lines[:] = plain_docstring_to_rst(list(lines), parameters)


class OptionalToctree(_MarkdownDirective):
    """A `:glob:` toctree of the entries that match existing pages, or nothing."""
    has_content = True
    option_spec = {"caption": directives.unchanged, "maxdepth": directives.nonnegative_int,
                   "titlesonly": directives.flag}

    def run(self):
        found = self.env.found_docs - {self.env.docname}
        entries = [e.strip() for e in self.content if e.strip()]
        kept = [e for e in entries if any(patfilter(found, docname_join(self.env.docname, e)))]
        if not kept:
            return []
        options = [f":{k}: {v}" if v is not None else f":{k}:" for k, v in self.options.items()]
        return self._parse("\n".join(["```{toctree}", ":glob:", *options, "", *kept, "```"]))


def setup(app):
    app.add_directive("normdyn-cli", NormdynCli)
    app.add_directive("normdyn-output", NormdynOutput)
    app.add_directive("normdyn-toctree", OptionalToctree)
    app.connect("autodoc-process-docstring", _process_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
