// Numerics and algorithm switches of the CUDA libraries, with PyTorch's names and defaults:
//
//   PyTorch                                     Colony
//   torch.backends.cuda.matmul.allow_tf32       backends::cuda::matmul::set_allow_tf32(bool)  (off)
//   torch.backends.cudnn.allow_tf32             backends::cudnn::set_allow_tf32(bool)         (on)
//   torch.backends.cudnn.benchmark              backends::cudnn::set_benchmark(bool)          (off)
//   torch.backends.cudnn.deterministic          backends::cudnn::set_deterministic(bool)      (off)
//
// TF32 runs float32 products on tensor cores with inputs rounded to 10 mantissa bits (about 1e-3
// relative error, several times faster on Ampere and later). float32 never gets a silent float16
// down-conversion, whatever the switches. benchmark times every cuDNN algorithm on the first call of
// each convolution shape (one host synchronization, then the fastest is cached); deterministic
// restricts cuDNN to algorithms whose results are bitwise reproducible. The switches act on the
// calls made after they change, in every thread; they are accepted without CUDA and then change
// nothing.
#pragma once

namespace colony::backends {
namespace cuda::matmul {
bool allow_tf32();
void set_allow_tf32(bool on);
}  // namespace cuda::matmul

namespace cudnn {
bool allow_tf32();
void set_allow_tf32(bool on);
bool benchmark();
void set_benchmark(bool on);
bool deterministic();
void set_deterministic(bool on);
}  // namespace cudnn
}  // namespace colony::backends
