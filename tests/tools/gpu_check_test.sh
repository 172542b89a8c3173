#!/usr/bin/env bash
# tools/gpu_check.sh selftest with the fake test binary Bazel built (its path is $1): see the
# selftest in tools/gpu_check.sh for what it checks.
exec tools/gpu_check.sh selftest "$1"
