// Reading the safetensors header: time to decode a file of N one-element float32 tensors (the
// header dominates: 100,000 tensors make an 8 MB header and 400 KB of data), and to encode it.
// The header was quadratic in the tensor count (10k: 0.7 s, 40k: 38 s); read as a stream it is
// linear. Prints one line per size, e.g. (Intel Xeon Sapphire Rapids VM, 2 cores shared with other
// builds at load 14, the repository's -O2 build, 2026-12-05):
//   tensors=10000 header_mb=0.8 encode_ms=101.0 decode_ms=37.2 decode_ns_per_tensor=3719
//   tensors=100000 header_mb=8.0 encode_ms=1380.6 decode_ms=440.2 decode_ns_per_tensor=4402
//   tensors=1000000 header_mb=83.3 encode_ms=11551.1 decode_ms=6245.0 decode_ns_per_tensor=6245
//   bazel run -c opt --config=cpu //benchmarks:safetensors_bench [-- --max 1000000]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "nn/safetensors.h"
#include "ops/raw_ops.h"

namespace {

using colony::io::NamedTensors;

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  long max = 1'000'000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--max") == 0 && i + 1 < argc) {
      max = std::atol(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: safetensors_bench [--max N]  (N >= 1000: the largest tensor count)\n");
      return 2;
    }
  }
  if (max < 1000) {
    std::fprintf(stderr, "safetensors_bench: --max must be at least 1000\n");
    return 2;
  }
  for (long n = 1000; n <= max; n *= 10) {
    NamedTensors tensors;
    tensors.reserve(static_cast<size_t>(n));
    for (long i = 0; i < n; ++i) {
      tensors.emplace_back("layers." + std::to_string(i) + ".weight",
                           colony::raw::full({1}, static_cast<double>(i), colony::TensorOptions(colony::kFloat32)));
    }
    auto t0 = std::chrono::steady_clock::now();
    const std::string bytes = colony::io::encode_safetensors(tensors);
    const double encode_ms = ms_since(t0);
    // Best of 3 decodes.
    double decode_ms = 1e300;
    for (int r = 0; r < 3; ++r) {
      t0 = std::chrono::steady_clock::now();
      const auto c = colony::io::decode_safetensors(bytes, "bench");
      const double t = ms_since(t0);
      if (static_cast<long>(c.tensors.size()) != n) {
        std::fprintf(stderr, "safetensors_bench: decoded %zu tensors of %ld\n", c.tensors.size(), n);
        return 1;
      }
      decode_ms = t < decode_ms ? t : decode_ms;
    }
    uint64_t header = 0;
    for (int i = 0; i < 8; ++i) header |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    std::printf("tensors=%ld header_mb=%.1f encode_ms=%.1f decode_ms=%.1f decode_ns_per_tensor=%.0f\n", n,
                header / 1e6, encode_ms, decode_ms, decode_ms * 1e6 / n);
    std::fflush(stdout);
  }
  return 0;
}
