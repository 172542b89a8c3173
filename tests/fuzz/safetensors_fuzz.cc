// Fuzz target: the safetensors reader (io::decode_safetensors), on bytes in memory.
#include <cstdint>
#include <string>

#include "nn/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  colony::fuzz::expect_clean([&] {
    auto c = colony::io::decode_safetensors(std::string(reinterpret_cast<const char*>(data), size), "fuzz.safetensors");
    // Touch every tensor's bytes: a size that disagrees with its storage shows here under ASan.
    for (auto& [name, t] : c.tensors) {
      const auto* p = static_cast<const volatile uint8_t*>(t.data_ptr_raw());
      uint8_t sum = 0;
      for (int64_t i = 0; i < t.nbytes(); ++i) sum = static_cast<uint8_t>(sum + p[i]);
      (void)sum;
    }
  });
  return 0;
}
