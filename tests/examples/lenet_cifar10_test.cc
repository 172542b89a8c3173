// lenet_cifar10 run as a program: which data it trains on, and what a damaged data folder does.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/data/data_test_util.h"

namespace {

namespace fs = std::filesystem;
using colony::data::testing::scratch_dir;
using colony::data::testing::write_bytes;

struct Outcome {
  int exit_code = -1;
  std::string output;
};

// Runs the example in `dir` (it writes lenet.safetensors there) for one optimizer step.
Outcome run_lenet(const fs::path& dir, const std::string& data_dir, const std::string& extra = "") {
  const std::string program = fs::absolute("examples/lenet_cifar10/lenet_cifar10").string();
  const std::string cmd = "cd '" + dir.string() + "' && '" + program + "' --data_dir '" + data_dir +
                          "' --epochs 1 --max_steps 1 --workers 0 --threads 1 " + extra + " 2>&1";
  Outcome r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(LeNetCifar10, MissingFolderTrainsOnTheSyntheticSet) {
  const fs::path dir = scratch_dir("lenet_missing");
  Outcome r = run_lenet(dir, (dir / "no-such-folder").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("training on the synthetic CIFAR-10-shaped set"), std::string::npos) << r.output;
}

// It used to see "not every file has the right size", train on synthetic images and exit 0.
TEST(LeNetCifar10, DamagedFolderIsAnErrorNamingTheFile) {
  const fs::path dir = scratch_dir("lenet_damaged");
  const fs::path data = dir / "cifar-10-batches-bin";
  fs::create_directories(data);
  write_bytes(data / "data_batch_1.bin", {1, 2, 3, 4, 5});
  Outcome r = run_lenet(dir, data.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("CIFAR10: " + (data / "data_batch_1.bin").string() + " holds 5 bytes, expected 30730000"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("synthetic"), std::string::npos) << r.output;
}

// --cuda_graph on the CPU is refused before any training, naming why.
TEST(LeNetCifar10, CudaGraphOnTheCpuIsAClearError) {
  const fs::path dir = scratch_dir("lenet_graph_cpu");
  Outcome r = run_lenet(dir, (dir / "no-such-folder").string(), "--device cpu --cuda_graph");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--cuda_graph: it needs a CUDA device, the run is on cpu"), std::string::npos) << r.output;
}

}  // namespace
