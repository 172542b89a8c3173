#!/usr/bin/env bash
# Builds and runs benchmarks/lenet_libtorch.cc, the libtorch (C++) reference for LeNet training,
# against one of the two libtorch builds a user would pick. Never part of Colony's build or tests.
#
#   benchmarks/lenet_libtorch.sh VENV   [--batch N] [--threads N] [--steps N] [--warmup N]
#       the libtorch inside a PyTorch wheel (2.x: MKL, oneDNN; C++20), installed with
#       python3 -m venv /tmp/torch2 && /tmp/torch2/bin/pip install torch numpy   (about 5 GB)
#   benchmarks/lenet_libtorch.sh debian [--batch N] ...
#       Debian's libtorch 1.13 with OpenBLAS (apt-get install libtorch-dev)
#
# Each binary is cached in ${LENET_LIBTORCH_OUT:-/tmp/lenet_libtorch}-<venv|debian> and rebuilt
# when the source is newer.
set -euo pipefail

which="${1:?usage: benchmarks/lenet_libtorch.sh VENV|debian [--batch N] [--threads N] [--steps N] [--warmup N]}"
shift
here="$(cd "$(dirname "$0")" && pwd)"
out="${LENET_LIBTORCH_OUT:-/tmp/lenet_libtorch}"

if [ "$which" = debian ]; then
  [ -f /usr/include/torch/csrc/api/include/torch/torch.h ] || {
    echo "lenet_libtorch.sh: no Debian libtorch (apt-get install libtorch-dev first)" >&2
    exit 1
  }
  out="$out-debian"
  flags=(-std=c++17 -isystem /usr/include/torch/csrc/api/include)
  libs=(-ltorch -ltorch_cpu -lc10)
else
  torch_dir="$("$which/bin/python3" -c 'import os, torch; print(os.path.dirname(torch.__file__))')" || {
    echo "lenet_libtorch.sh: no PyTorch in $which (pip install torch there first)" >&2
    exit 1
  }
  abi="$("$which/bin/python3" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')"
  out="$out-venv"
  flags=(-std=c++20 -D_GLIBCXX_USE_CXX11_ABI="$abi" -isystem "$torch_dir/include"
         -isystem "$torch_dir/include/torch/csrc/api/include")
  libs=(-L"$torch_dir/lib" -Wl,-rpath,"$torch_dir/lib" -ltorch -ltorch_cpu -lc10)
fi

if [ ! -x "$out" ] || [ "$here/lenet_libtorch.cc" -nt "$out" ]; then
  echo "lenet_libtorch.sh: compiling $out" >&2
  g++ -O2 "${flags[@]}" "$here/lenet_libtorch.cc" -o "$out" -Wl,--no-as-needed "${libs[@]}" -lpthread
fi
exec "$out" "$@"
