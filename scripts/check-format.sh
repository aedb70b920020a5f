#!/usr/bin/env bash
# Checks C++ formatting with clang-format-22 and the repository's
# .clang-format. Only the directories listed are formatted so far; the rest
# joins with the repository-wide reformat (then list `.` here).
# `scripts/check-format.sh --fix` rewrites the files instead.
set -euo pipefail
cd "$(dirname "$0")/.."
FORMATTED=(analysis fuzz lowering server support tools test/unit)
if ! command -v clang-format-22 >/dev/null 2>&1; then
  echo "check-format: clang-format-22 is missing; install it with scripts/setup.sh" >&2
  exit 1
fi
mapfile -t files < <(git ls-files -- "${FORMATTED[@]}" | grep -E '\.(cpp|h)$')
if [ "${1:-}" = "--fix" ]; then
  clang-format-22 -i "${files[@]}"
  exit 0
fi
clang-format-22 --dry-run --Werror "${files[@]}"
echo "check-format: ${#files[@]} files formatted"
