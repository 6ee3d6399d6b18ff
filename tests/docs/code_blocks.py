"""Runs the code blocks of one documentation page as written, in order, in a fresh folder.

    /usr/bin/python3 tests/docs/code_blocks.py PAGE.md [--list]

Fenced blocks tagged `bash` run in bash (`set -euo pipefail`), `python` blocks run in one Python
namespace per page (as in a notebook: later blocks see the names of earlier ones), `toml` blocks
are parsed, and the blocks of other languages (`text` for output, `cmake`, `json`, ...) are shown
only. A block with no language, or tagged `sh`/`shell`/`console`, is an error: say what it is.

Markers, as HTML comments on the lines just before a block (invisible on GitHub and on the site):
    <!-- docs-test: skip REASON -->    the block is not run (a reason is required)
    <!-- docs-test: file NAME -->      the block's text is also written to NAME (any language)
    <!-- docs-test: exit N -->         the bash block must end with exit code N

The folder holds `data/` (a link to the repository's example configurations) and nothing else;
`normdyn` and `python3` (/usr/bin/python3) are on PATH, and `import normdyn` imports the package
installed into a temporary prefix from the build. Environment (set by CTest): NORMDYN_BUILD_DIR,
NORMDYN_BINARY, NORMDYN_PYTHON_INSTALL_DIR, CMAKE_COMMAND. Exit code 77 when the page has no block
to run (CTest reports the test as skipped).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback

import installed

SOURCE = installed.SOURCE
RUNNABLE = {"bash", "python", "toml"}
SHOWN = {"text", "bibtex", "yaml", "cmake", "c", "cpp", "c++", "json", "csv", "ini", "markdown", "pycon", "rst"}
MARKER = re.compile(r"^<!--\s*docs-test:\s*(\w+)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`{]*)?(\{[^}]*\})?\s*(.*)$")


class Block:
    def __init__(self, page, line, language, text, markers):
        self.page, self.line, self.language, self.text, self.markers = page, line, language, text, markers

    @property
    def where(self):
        return f"{self.page}:{self.line}"


def blocks(path: pathlib.Path) -> list[Block]:
    """The fenced blocks of a Markdown page with the docs-test markers just above each one. MyST
    directives (```{name}) are not code blocks."""
    lines = path.read_text().splitlines()
    found, markers, i = [], {}, 0
    rel = path.relative_to(SOURCE) if path.is_relative_to(SOURCE) else path
    while i < len(lines):
        m = MARKER.match(lines[i].strip())
        if m:
            key, value = m.group(1), m.group(2)
            if key not in ("skip", "file", "exit"):
                raise SystemExit(f"{rel}:{i + 1}: unknown docs-test marker '{key}' (skip, file, exit)")
            if key == "skip" and not value:
                raise SystemExit(f"{rel}:{i + 1}: docs-test: skip needs a reason")
            markers[key] = value
            i += 1
            continue
        f = FENCE.match(lines[i])
        if f and f.group(4) is None:
            indent, fence, language = f.group(1), f.group(2), (f.group(3) or "").lower()
            start = i + 1
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence[0] * len(fence)):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
                i += 1
            found.append(Block(rel, start, language, "\n".join(body) + "\n", markers))
            markers = {}
        elif f and f.group(4) is not None:
            # A directive: skip to its closing fence (its content is not code to run).
            fence = f.group(2)
            i += 1
            while i < len(lines) and lines[i].strip() != fence:
                i += 1
        elif lines[i].strip() and markers:
            raise SystemExit(f"{rel}:{i + 1}: a docs-test marker must stand just above a code block")
        i += 1
    for b in found:
        if b.language not in RUNNABLE | SHOWN:
            hint = " (tag shell commands `bash`)" if b.language in ("sh", "shell", "console", "zsh") else \
                   " (give every block a language: `text` for output)" if not b.language else ""
            raise SystemExit(f"{b.where}: code block tagged '{b.language}'{hint}")
        if "exit" in b.markers and b.language != "bash":
            raise SystemExit(f"{b.where}: docs-test: exit applies to bash blocks")
    return found


def run_page(page: pathlib.Path) -> int:
    found = blocks(page)
    todo = [b for b in found if b.language in RUNNABLE and "skip" not in b.markers]
    for b in found:
        if "skip" in b.markers:
            print(f"{b.where}: skipped ({b.markers['skip']})")
    if not todo:
        print(f"{page}: no code block to run")
        return 77
    with tempfile.TemporaryDirectory(prefix="normdyn-docs-") as tmp:
        folder = pathlib.Path(tmp) / "work"
        folder.mkdir()
        (folder / "data").symlink_to(SOURCE / "data")
        env = installed.environment(pathlib.Path(tmp))
        os.environ.update(env)
        sys.path.insert(0, env["PYTHONPATH"].split(os.pathsep)[0])
        os.chdir(folder)
        namespace = {"__name__": "__main__"}
        for b in found:
            if "file" in b.markers:
                target = folder / b.markers["file"]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(b.text)
            if b not in todo:
                continue
            started = time.monotonic()
            print(f"---- {b.where} ({b.language})", flush=True)
            if b.language == "toml":
                try:
                    tomllib.loads(b.text)
                except tomllib.TOMLDecodeError as e:
                    print(f"{b.where}: not valid TOML: {e}")
                    return 1
            elif b.language == "bash":
                p = subprocess.run(["bash", "-c", "set -euo pipefail\n" + b.text], cwd=folder, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                sys.stdout.write(p.stdout)
                expected = int(b.markers.get("exit", 0))
                if p.returncode != expected:
                    print(f"{b.where}: exit code {p.returncode}, expected {expected}")
                    return 1
            else:
                try:
                    code = compile(b.text, str(SOURCE / b.page) + f" (block at line {b.line})", "exec")
                    exec(code, namespace)
                except BaseException:
                    traceback.print_exc()
                    print(f"{b.where}: the Python block failed")
                    return 1
                finally:
                    sys.stdout.flush()
            print(f"     {time.monotonic() - started:.1f} s", flush=True)
        os.chdir(SOURCE)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=pathlib.Path)
    parser.add_argument("--list", action="store_true", help="list the blocks and what would be done, run nothing")
    args = parser.parse_args()
    page = args.page.resolve()
    if args.list:
        for b in blocks(page):
            action = "skip: " + b.markers["skip"] if "skip" in b.markers else \
                     "run" if b.language in RUNNABLE else "shown"
            print(f"{b.where} {b.language}: {action}")
        return 0
    return run_page(page)


if __name__ == "__main__":
    sys.exit(main())
