// The user-facing names of the switches kept (and read) in runtime/cuda/backend_flags.h.
#include "tensor/backends.h"

#include "runtime/cuda/backend_flags.h"

namespace colony::backends {
namespace flags = kernels::cuda;

bool cuda::matmul::allow_tf32() { return flags::matmul_allow_tf32(); }
void cuda::matmul::set_allow_tf32(bool on) { flags::set_matmul_allow_tf32(on); }

bool cudnn::allow_tf32() { return flags::cudnn_allow_tf32(); }
void cudnn::set_allow_tf32(bool on) { flags::set_cudnn_allow_tf32(on); }
bool cudnn::benchmark() { return flags::cudnn_benchmark(); }
void cudnn::set_benchmark(bool on) { flags::set_cudnn_benchmark(on); }
bool cudnn::deterministic() { return flags::cudnn_deterministic(); }
void cudnn::set_deterministic(bool on) { flags::set_cudnn_deterministic(on); }

}  // namespace colony::backends
