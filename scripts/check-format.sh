#!/usr/bin/env bash
# The format check of CI: every tracked C++ file is as clang-format 14 writes it under the
# repository's .clang-format. Prints the files that are not and exits 1; fix with
#   git ls-files '*.cc' '*.h' | xargs clang-format-14 -i
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$fmt" ]; then
  echo "check-format: clang-format 14 is not installed (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
# clang-format prints each unformatted place as file:line:column; xargs exits non-zero if any.
if ! git ls-files '*.cc' '*.h' | xargs -P"$(nproc)" -n 16 "$fmt" --dry-run --Werror; then
  echo "check-format: files above are not formatted (git ls-files '*.cc' '*.h' | xargs $fmt -i)" >&2
  exit 1
fi
echo "check-format: $(git ls-files '*.cc' '*.h' | wc -l) files formatted"
