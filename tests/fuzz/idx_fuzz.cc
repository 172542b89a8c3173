// Fuzz target: the IDX reader (data::read_idx_ubyte), plain or gzip-compressed (zlib tells them
// apart by the gzip magic). The first byte picks the dimension count the caller expects (1..4).
#include <cstdint>

#include "data/idx.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int dims = 1 + data[0] % 4;
  const std::string path = colony::fuzz::write_scratch("input.idx", data + 1, size - 1);
  colony::fuzz::expect_clean([&] {
    colony::Tensor t = colony::data::read_idx_ubyte(path, dims);
    if (t.numel() > 0) {
      volatile uint8_t last = t.data_ptr<uint8_t>()[t.numel() - 1];  // the whole shape is backed
      (void)last;
    }
  });
  return 0;
}
