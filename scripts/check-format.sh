#!/usr/bin/env bash
# The formatting check CI runs (as the ctest `Hygiene.ChangedSourcesAreFormatted`): every C++
# source changed since the commit in .clang-format-since, as it is in the working tree, must be
# as `clang-format` (the repository's .clang-format) writes it. The tree is formatted file by
# file as it is touched, so the check covers what changed since it was introduced and grows
# with every change; `clang-format -i FILE` mends a file it names.
# Exit: 0 formatted (or nothing to check), 1 a file is not, 77 cannot check here (no git
# history of that commit, no clang-format: a shallow clone or a machine without the tool).
set -uo pipefail
cd "$(dirname "$0")/.."
since=$(tr -d '[:space:]' < .clang-format-since)
if ! command -v clang-format >/dev/null; then echo "skipped: no clang-format"; exit 77; fi
if ! git rev-parse -q --verify "$since^{commit}" >/dev/null 2>&1; then
  echo "skipped: commit $since (.clang-format-since) is not in this clone's history"; exit 77
fi
mapfile -t files < <( { git diff --name-only --diff-filter=d "$since" -- '*.cpp' '*.h';
                        git ls-files --others --exclude-standard -- '*.cpp' '*.h'; } |
                      grep -v '^tests/fuzz/' | sort -u)
[ ${#files[@]} -eq 0 ] && { echo "no C++ source changed since $since"; exit 0; }
bad=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (clang-format -i $f)"; bad=1
  fi
done
[ $bad -eq 0 ] && echo "${#files[@]} changed source(s) formatted"
exit $bad
