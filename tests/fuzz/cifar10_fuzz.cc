// Fuzz target: the CIFAR-10 reader (data::CIFAR10 and CIFAR10::available) on a folder holding
// test_batch.bin. A batch file is 30,730,000 bytes, so the first byte picks how the input becomes
// one: 1 (mod 8), the rest is repeated to fill a file of the right size (the records and their
// labels; ~0.3 s an input, hence only one input in 8); else the file is the rest as it is (sizes).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

#include "data/cifar10.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using colony::data::CIFAR10;
  if (size < 1) return 0;
  const std::filesystem::path dir = colony::fuzz::scratch_dir() / "cifar";
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "test_batch.bin").string();
  const uint8_t* rest = data + 1;
  const size_t n = size - 1;
  if (data[0] % 8 != 1 || n == 0) {
    colony::fuzz::write_scratch("cifar/test_batch.bin", rest, n);
  } else {
    const size_t total = CIFAR10::kRecordsPerFile * CIFAR10::kRecordBytes;
    std::vector<uint8_t> bytes(rest, rest + n);
    while (bytes.size() < total) bytes.insert(bytes.end(), bytes.begin(), bytes.begin() + std::min(bytes.size(), total - bytes.size()));
    colony::fuzz::write_scratch("cifar/test_batch.bin", bytes.data(), bytes.size());
  }
  colony::fuzz::expect_clean([&] {
    (void)CIFAR10::available(dir.string());
    CIFAR10 test(dir.string(), colony::data::Split::kTest);
    if (test.size() != CIFAR10::kRecordsPerFile) std::abort();
    for (int64_t i : {int64_t{0}, test.size() - 1}) {
      const int64_t label = test.get(i).target.item<int64_t>();
      if (label < 0 || label > 9) std::abort();  // the reader promises labels in 0..9
    }
  });
  return 0;
}
