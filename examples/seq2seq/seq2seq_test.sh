#!/bin/bash
# Trains the example (its default steps) and checks that the model learned to reverse sequences.
set -euo pipefail
out=$("$1")
echo "$out"
grep -q "^step 100 loss " <<<"$out"
match=$(sed -n 's/^exact_match=//p' <<<"$out")
awk -v m="$match" 'BEGIN { exit !(m >= 0.9) }' || { echo "exact_match $match < 0.9"; exit 1; }
