#!/bin/bash
# The code block after "<!-- small_cnn -->" in examples/small_cnn/README.md must equal main.cc between its markers.
set -euo pipefail
example=$(sed -n '/\[readme-begin\]/,/\[readme-end\]/p' "$1" | sed '1d;$d')
readme=$(sed -n '/<!-- small_cnn -->/,/^```$/p' "$2" | sed '1,2d;$d')
if [[ "$example" != "$readme" ]]; then
  diff <(echo "$example") <(echo "$readme") || true
  echo "examples/small_cnn/README.md's block differs from examples/small_cnn/main.cc (update the README)" >&2
  exit 1
fi
