#!/usr/bin/env bash
# Rewrites README.md's configuration tables (the keys, then the methods) from
# `normdyn config-reference` (a test checks they agree).
set -euo pipefail
cd "$(dirname "$0")/.."
table=$(./build/app/normdyn config-reference)
/usr/bin/python3 - "$table" <<'PY'
import re, sys
table = sys.argv[1].strip() + "\n"
text = open("README.md").read()
pattern = re.compile(r"\| key \| type \| default \| meaning \|\n\|---\|---\|---\|---\|\n(?:\|.*\|\n)+"
                     r"(?:\n\| `solver.method` \|.*\|\n(?:\|.*\|\n)+)?")
new, count = pattern.subn(lambda m: table, text, count=1)
if count != 1:
    sys.exit("README.md: configuration table not found")
open("README.md", "w").write(new)
PY
