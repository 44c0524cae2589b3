#!/usr/bin/env bash
# Checks that the C++ lines changed since a base commit follow .clang-format (only those lines:
# the rest of the tree is not reformatted).
#   scripts/check-format.sh [BASE]
# BASE defaults to $NPUFORGE_FORMAT_BASE, else to where HEAD left `main` (git merge-base), or to
# HEAD's first parent when HEAD is on main itself (after a merge: everything the merge brought in).
# The working tree is compared with BASE, so uncommitted edits are checked too.
# Exit 0: "format: N changed files follow .clang-format"; exit 1: the diff clang-format wants,
# to apply with `git clang-format-14 BASE`; exit 2: no clang-format-14 or a bad BASE.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in clang-format-14 git-clang-format-14; do
  command -v "$tool" >/dev/null || { echo "check-format: $tool not found (Debian package clang-format-14)" >&2; exit 2; }
done

base=${1:-${NPUFORGE_FORMAT_BASE:-}}
if [ -z "$base" ]; then
  if git rev-parse -q --verify main >/dev/null && [ "$(git merge-base HEAD main)" != "$(git rev-parse HEAD)" ]; then
    base=$(git merge-base HEAD main)
  else
    base=HEAD~1
  fi
fi
git rev-parse -q --verify "$base^{commit}" >/dev/null || { echo "check-format: '$base' is not a commit" >&2; exit 2; }

short=$(git rev-parse --short "$base")
extensions=cc,h
files=$(git diff --name-only --diff-filter=d "$base" -- '*.cc' '*.h' | wc -l)
# git-clang-format-14 exits 0 whether or not it prints a diff (later versions exit 1): the diff
# itself is the verdict.
set +e
out=$(git clang-format-14 --binary clang-format-14 --extensions "$extensions" --diff "$base" -- 2>&1)
rc=$?
set -e
if [ $rc -gt 1 ]; then
  printf '%s\n' "$out" >&2
  exit 2
fi
if grep -q '^diff --git' <<<"$out"; then
  printf '%s\n' "$out"
  echo "format: changed lines since $short do not follow .clang-format;" \
       "'git clang-format-14 $short' applies the diff above" >&2
  exit 1
fi
echo "format: $files changed files follow .clang-format (changed lines since $short)"
