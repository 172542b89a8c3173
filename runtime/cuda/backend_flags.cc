#include "runtime/cuda/backend_flags.h"

#include <atomic>
#include <cctype>
#include <stdexcept>
#include <string>

namespace colony::kernels::cuda {
namespace {

std::atomic<bool> matmul_tf32{false};
std::atomic<bool> cudnn_tf32{true};
std::atomic<bool> benchmark{false};
std::atomic<bool> deterministic{false};

}  // namespace

bool matmul_allow_tf32() { return matmul_tf32.load(std::memory_order_relaxed); }
void set_matmul_allow_tf32(bool on) { matmul_tf32.store(on, std::memory_order_relaxed); }
bool cudnn_allow_tf32() { return cudnn_tf32.load(std::memory_order_relaxed); }
void set_cudnn_allow_tf32(bool on) { cudnn_tf32.store(on, std::memory_order_relaxed); }
bool cudnn_benchmark() { return benchmark.load(std::memory_order_relaxed); }
void set_cudnn_benchmark(bool on) { benchmark.store(on, std::memory_order_relaxed); }
bool cudnn_deterministic() { return deterministic.load(std::memory_order_relaxed); }
void set_cudnn_deterministic(bool on) { deterministic.store(on, std::memory_order_relaxed); }

ConvMath conv_math(DType dtype, ConvMath rated, bool allow_tf32) {
  switch (dtype) {
    case DType::Float32:
      if (!allow_tf32) return ConvMath::Fma;
      return rated == ConvMath::TensorOpAllowConversion ? ConvMath::Default : rated;
    case DType::Float16:
    case DType::BFloat16:
      return ConvMath::TensorOp;
    default:
      return ConvMath::Default;
  }
}

size_t cublas_workspace_bytes(const char* config, int sm_major) {
  std::string c = config ? config : "";
  if (c.empty()) c = sm_major >= 9 ? ":4096:8" : ":4096:2:16:8";
  auto bad = [&c]() {
    return std::invalid_argument("CUBLAS_WORKSPACE_CONFIG=" + c +
                                 ": expected \":SIZE_KIB:COUNT\" pairs, e.g. \":4096:8\" (8 buffers of 4096 KiB)");
  };
  // Numbers separated by ':' with a leading ':'; they come in (size KiB, count) pairs.
  size_t total = 0, pos = 0;
  int fields = 0;
  size_t size_kib = 0;
  while (pos < c.size()) {
    if (c[pos] != ':') throw bad();
    size_t end = pos + 1;
    while (end < c.size() && std::isdigit(static_cast<unsigned char>(c[end]))) ++end;
    if (end == pos + 1 || end - pos > 10) throw bad();
    size_t v = std::stoull(c.substr(pos + 1, end - pos - 1));
    if (fields % 2 == 0) {
      size_kib = v;
    } else {
      total += size_kib * 1024 * v;
    }
    ++fields;
    pos = end;
  }
  if (fields == 0 || fields % 2 != 0) throw bad();
  return total;
}

}  // namespace colony::kernels::cuda
