#!/bin/sh
# The formatting of the C++ sources against .clang-format at the root, by clang-format-14 (Debian 12's;
# another version formats a few constructs differently). Lists every file it would change and exits 1
# if there is any.
#
#   scripts/check_format.sh [ROOT]      (ROOT: the repository, by default the parent of scripts/)
#
# After an edit: clang-format-14 -i FILE...
set -eu
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
if ! command -v clang-format-14 > /dev/null; then
  echo "check_format.sh: clang-format-14 is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
files=$(find analysis analyze app bench experiment include python solvers src studies tests \
          -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' | sort)
# One call for every file: it names each place it would change as FILE:LINE:COLUMN: error: ...
bad=$(clang-format-14 --dry-run $files 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: .*code should be clang-formatted.*/\1/p' | sort -u)
for f in $bad; do echo "$f: not formatted (clang-format-14 -i $f)"; done
echo "$(echo "$files" | wc -l) files checked, $(echo "$bad" | grep -c . || true) not formatted"
[ -z "$bad" ]
