#!/bin/bash
# Trains the example for its 2 epochs and checks the printed model, the losses and the reload.
set -euo pipefail
out=$("$1" "$TEST_TMPDIR/net.safetensors")
echo "$out"
grep -q "(relu): ReLU(inplace=True)" <<<"$out"
grep -q "(pool): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)" <<<"$out"
grep -q "(bn): BatchNorm2d(16, eps=1e-05, momentum=0.1" <<<"$out"
grep -q "(dropout): Dropout(p=0.25, inplace=False)" <<<"$out"
grep -q "^epoch 1 loss .* lr 0.00025$" <<<"$out"
grep -q "restored model agrees: yes" <<<"$out"
