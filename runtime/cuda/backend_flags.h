// The switches PyTorch users know as torch.backends.cuda.matmul.allow_tf32 and
// torch.backends.cudnn.{allow_tf32, benchmark, deterministic}, with PyTorch's defaults, and the
// policies blas.cc and cudnn_conv.cc derive from them. Plain C++: the user API (tensor/backends.h)
// sets them in every build; the CUDA code reads them at each call.
#pragma once

#include <cstddef>

#include "kernels/common/dtype.h"

namespace colony::kernels::cuda {

// float32 matrix products may use TF32 tensor cores (10-bit mantissa inputs). Default false.
bool matmul_allow_tf32();
void set_matmul_allow_tf32(bool on);
// float32 convolutions may use TF32. Default true (PyTorch's default too: convolutions gain most).
bool cudnn_allow_tf32();
void set_cudnn_allow_tf32(bool on);
// Time every cuDNN algorithm once per shape (cudnnFind*AlgorithmEx) and keep the fastest, instead
// of cuDNN's heuristic pick. Default false.
bool cudnn_benchmark();
void set_cudnn_benchmark(bool on);
// Only cuDNN algorithms that give bitwise-identical results run after run. Default false.
bool cudnn_deterministic();
void set_cudnn_deterministic(bool on);

// cudnnMathType_t's values, so that the policy below is plain C++ (and tested on any host).
enum class ConvMath { Default = 0, TensorOp = 1, TensorOpAllowConversion = 2, Fma = 3 };

// The math type a convolution of `dtype` runs with, given the one cuDNN rated an algorithm with:
// float32 never gets TensorOpAllowConversion (it would round inputs to float16 silently) and gets
// Fma (no tensor cores at all) unless TF32 is allowed; float16/bfloat16 use tensor cores; float64
// the default.
ConvMath conv_math(DType dtype, ConvMath rated, bool allow_tf32);

// Bytes of the cuBLAS workspace given to each (handle, stream). `config` is CUBLAS_WORKSPACE_CONFIG
// (cuBLAS's and PyTorch's syntax ":SIZE_KIB:COUNT[:SIZE_KIB:COUNT...]", e.g. ":4096:8" = 32 MiB);
// null or empty selects PyTorch's default for the architecture: ":4096:8" (32 MiB) from sm_90
// (Hopper), ":4096:2:16:8" (8 MiB + 128 KiB) before. Throws std::invalid_argument on bad syntax.
size_t cublas_workspace_bytes(const char* config, int sm_major);

}  // namespace colony::kernels::cuda
