#!/bin/bash
# Trains the example (its default steps) and checks that u came close to sin(pi x).
set -euo pipefail
out=$("$1")
echo "$out"
grep -q "^step 500 loss " <<<"$out"
err=$(sed -n 's/^max_abs_error=//p' <<<"$out")
awk -v e="$err" 'BEGIN { exit !(e < 0.05) }' || { echo "max_abs_error $err >= 0.05"; exit 1; }
