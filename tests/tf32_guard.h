// testing::Tf32Guard: TF32 on or off for a scope (tests/BUILD :tf32_guard). Apart from
// test_util.h, which every test includes, so that only the tests that use it depend on it.
#pragma once

#include "tensor/backends.h"

namespace colony::testing {

// TF32 on or off for both cuBLAS and cuDNN within a scope, the switches restored after. Tests that
// compare float32 on CUDA with the CPU at float32 tolerances turn it off: TF32 rounds the inputs
// of products to 10 mantissa bits (about 1e-3 relative), and cuDNN allows it by default, as in
// PyTorch. TF32 itself is tested apart, with its own tolerance.
class Tf32Guard {
 public:
  explicit Tf32Guard(bool allow) {
    backends::cuda::matmul::set_allow_tf32(allow);
    backends::cudnn::set_allow_tf32(allow);
  }
  ~Tf32Guard() {
    backends::cuda::matmul::set_allow_tf32(matmul_);
    backends::cudnn::set_allow_tf32(cudnn_);
  }
  Tf32Guard(const Tf32Guard&) = delete;
  Tf32Guard& operator=(const Tf32Guard&) = delete;

 private:
  const bool matmul_ = backends::cuda::matmul::allow_tf32();
  const bool cudnn_ = backends::cudnn::allow_tf32();
};

}  // namespace colony::testing
