#!/usr/bin/env python3
"""The size rules of the product sources: no file over 800 lines, no function over 150.

Lists every file of src/ include/ solvers/ analysis/ experiment/ app/ (C++ sources and headers)
longer than MAX_FILE_LINES and every function longer than MAX_FUNCTION_LINES, and exits 1 if there
is any. Functions are found by brace matching after comments, strings and character literals are
blanked: a brace at namespace or class scope whose statement has a parameter list opens a function
(its length counts from the first line of its signature to its closing brace); lambdas and blocks
inside a function are part of it. A table written as a function (one statement that lists rows) may
be longer: it is named in TABLES with the reason.

Usage: check_sizes.py [ROOT]   (ROOT: the repository, by default the parent of scripts/)
"""
import pathlib
import re
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 150
DIRECTORIES = ["src", "include", "solvers", "analysis", "experiment", "app"]
SUFFIXES = {".cpp", ".hpp", ".h", ".cc"}
# Functions that are one table of rows: (path, function name) -> why it is exempt.
TABLES = {
    ("src/config/key_table.cpp", "keys"): "the key table: one row per configuration key",
}

_CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|try)\s*$")
_TOKEN = re.compile(r"//[^\n]*|/\*.*?\*/|R\"([^(\s]*)\(.*?\)\1\"|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def blank(text):
    """Comments, strings and character literals replaced by spaces (newlines kept)."""
    def repl(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return _TOKEN.sub(repl, text)


def scope_kind(statement):
    """What a '{' opens, from the text of its statement before it."""
    s = " ".join(statement.split())
    if re.search(r"\bnamespace\b", s) or re.match(r'^extern\s*"?C?"?\s*$', s) or s.startswith("extern"):
        return "namespace"
    if re.search(r"\b(class|struct|union|enum)\b[^()]*$", s) and "=" not in s:
        return "class"
    if ")" in s and not _CONTROL.search(s.split("(")[0]):
        head = s.split("(")[0]
        # An initializer (`x = f(...) {`), a lambda (`[...](...) {`) or a macro call is no function.
        if "=" in head.replace("operator=", "").replace("operator==", "") or head.rstrip().endswith("]"):
            return "block"
        return "function"
    return "block"


def function_name(statement):
    s = " ".join(statement.split())
    head = s.split("(")[0].strip()
    if head.endswith("operator"):
        head += "()"
    return head.split()[-1] if head.split() else "?"


def functions(text):
    """(name, first line, last line) of every function at namespace or class scope."""
    code = blank(text)
    out = []
    stack = []  # scope kinds
    statement_start = 0  # index where the current statement begins
    func_start = None  # (name, line) of the outermost function being read
    i = 0
    line = 1
    n = len(code)
    while i < n:
        c = code[i]
        if c == "\n":
            line += 1
        elif c in ";":
            if "function" not in stack:
                statement_start = i + 1
        elif c == "{":
            if "function" in stack:
                stack.append("block")
            else:
                statement = code[statement_start:i]
                kind = scope_kind(statement)
                # A preprocessor line before the statement is not part of it.
                lines = [l for l in statement.split("\n") if not l.strip().startswith("#")]
                statement = "\n".join(lines)
                kind = scope_kind(statement)
                if kind == "function":
                    stripped = code[statement_start:i]
                    first = line - stripped.count("\n")
                    # Skip leading blank lines of the statement.
                    for l in stripped.split("\n"):
                        if l.strip() and not l.strip().startswith("#"):
                            break
                        first += 1
                    func_start = (function_name(statement), first)
                stack.append(kind)
                statement_start = i + 1
        elif c == "}":
            kind = stack.pop() if stack else "block"
            if kind == "function":
                out.append((func_start[0], func_start[1], line))
                func_start = None
            if "function" not in stack:
                statement_start = i + 1
        elif c == ":" and "function" not in stack and stack and stack[-1] == "class":
            # Access specifiers (`public:`) end a statement in a class body.
            before = code[statement_start:i].strip()
            if before in ("public", "private", "protected"):
                statement_start = i + 1
        i += 1
    return out


def main():
    root = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
    problems = []
    for directory in DIRECTORIES:
        for path in sorted((root / directory).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            text = path.read_text(errors="replace")
            count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            if count > MAX_FILE_LINES:
                problems.append(f"{rel}: {count} lines (at most {MAX_FILE_LINES})")
            for name, first, last in functions(text):
                length = last - first + 1
                if length > MAX_FUNCTION_LINES and (rel, name.split("::")[-1]) not in TABLES:
                    problems.append(f"{rel}:{first}: function {name}: {length} lines (at most {MAX_FUNCTION_LINES})")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} size problem(s): split the file by concern, or the function into named steps",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
