// No CUDA kernel spills registers to local memory: a spill turns register traffic into memory
// traffic in the hottest loops. Reads ptxas's report (nvcc --resource-usage) that tools/cuda.bzl
// writes next to every .cu object, so it checks exactly the kernels this build compiled, for the
// architecture it compiled them for (--define=cuda_arch, default sm_90).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace colony {
namespace {

namespace fs = std::filesystem;

// The runfiles folder of //kernels/cuda:kernels_resource_usage.
const char* kUsageDir = "kernels/cuda/_kernels_nvcc";

struct Spill {
  std::string file, function;
  long stores, loads;
};

// Every "Function properties for F" block of one report, with F's spill bytes; `functions`
// counts the blocks seen, so a report this parser no longer understands fails the test.
std::vector<Spill> spills_in(const fs::path& report, int& functions) {
  std::vector<Spill> found;
  std::ifstream in(report);
  std::string line, function;
  const std::string props = "Function properties for ";
  while (std::getline(in, line)) {
    if (auto p = line.find(props); p != std::string::npos) {
      function = line.substr(p + props.size());
      continue;
    }
    long frame = 0, stores = 0, loads = 0;
    if (std::sscanf(line.c_str(), " %ld bytes stack frame, %ld bytes spill stores, %ld bytes spill loads", &frame,
                    &stores, &loads) == 3) {
      ++functions;
      if (stores > 0 || loads > 0) found.push_back({report.filename().string(), function, stores, loads});
    }
  }
  return found;
}

TEST(RegisterSpill, NoKernelSpills) {
#ifndef COLONY_WITH_CUDA
  GTEST_SKIP() << "built without CUDA: no kernels to inspect";
#else
  ASSERT_TRUE(fs::is_directory(kUsageDir)) << kUsageDir << " is missing from the runfiles";
  int reports = 0, functions = 0;
  std::vector<Spill> spills;
  for (const auto& entry : fs::directory_iterator(kUsageDir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 19 || name.substr(name.size() - 19) != ".resource_usage.txt") continue;
    ++reports;
    for (const Spill& s : spills_in(entry.path(), functions)) spills.push_back(s);
  }
  EXPECT_GT(reports, 0) << "no ptxas reports in " << kUsageDir;
  EXPECT_GT(functions, 0) << "the ptxas reports name no kernels: has the report format changed?";
  for (const Spill& s : spills) {
    ADD_FAILURE() << s.file << ": " << s.function << " spills " << s.stores << " bytes (stores), " << s.loads
                  << " bytes (loads)";
  }
  std::printf("%d ptxas reports, %d functions, %zu with spills\n", reports, functions, spills.size());
#endif
}

}  // namespace
}  // namespace colony
