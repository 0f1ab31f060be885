#!/usr/bin/env bash
# Formats the C++/CUDA sources with the tree's .clang-format (clang-format from Debian, installed
# by scripts/setup.sh). `scripts/format.sh --check` changes nothing and fails, naming the files,
# when any source is not formatted (.ci/run calls it first).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null || { echo "format: clang-format not found (scripts/setup.sh installs it)" >&2; exit 2; }
mapfile -t files < <(git ls-files 'app/*' 'main/*' 'kernels/*' 'render/*' 'tests/*' 'fuzz/*' 'python/src/*' 'examples/*' | grep -E '\.(cpp|h|cu|cuh)$')
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do clang-format "$f" | cmp -s - "$f" || bad+=("$f"); done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: ${#bad[@]} file(s) differ from .clang-format (run scripts/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted"
else
  clang-format -i "${files[@]}"
fi
