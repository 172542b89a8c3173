// lenet_cifar10 run as a program: which data it trains on, what a damaged data folder does, and
// resuming from its checkpoints (after a whole epoch, mid-epoch with another batch size or world
// size, and what it refuses).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/data/data_test_util.h"
#include "tests/examples/run_program.h"

namespace {

namespace fs = std::filesystem;
using colony::data::testing::scratch_dir;
using colony::testing::has;
using colony::testing::Outcome;
using colony::testing::run_command;
using colony::data::testing::write_bytes;

// Runs the example in `dir` (it writes lenet.safetensors there) for one optimizer step.
Outcome run_lenet(const fs::path& dir, const std::string& data_dir, const std::string& extra = "") {
  const std::string program = fs::absolute("examples/lenet_cifar10/lenet_cifar10").string();
  return run_command("cd '" + dir.string() + "' && '" + program + "' --data_dir '" + data_dir +
                     "' --epochs 1 --max_steps 1 --workers 0 --threads 1 " + extra + " 2>&1");
}

// Runs the example in `dir` with `args` on the synthetic set, one thread, the first `images`
// training images, under `colonyrun --nproc_per_node=N` when ranks > 1.
Outcome run_args(const fs::path& dir, const std::string& args, int ranks = 1, int images = 2000) {
  const std::string program = fs::absolute("examples/lenet_cifar10/lenet_cifar10").string();
  const std::string launcher =
      ranks > 1 ? "'" + fs::absolute("distributed/colonyrun").string() + "' --master_port=0 --grace=2 --nproc_per_node=" +
                      std::to_string(ranks) + " "
                : "";
  return run_command("cd '" + dir.string() + "' && " + launcher + "'" + program + "' --data_dir '" +
                     (dir / "no-such-folder").string() + "' --workers 0 --threads 1 --train_images " +
                     std::to_string(images) + " " + args + " 2>&1");
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Saving `epoch` instead of `epoch + 1` after a whole epoch used to pass every test: the resumed
// run trained epoch 1 again, scored it again and wrote a second metrics line for it.
TEST(LeNetCifar10, ACheckpointAfterAWholeEpochResumesAtTheNextEpoch) {
  const fs::path dir = scratch_dir("lenet_whole_epoch");
  const std::string ckpt = (dir / "c.safetensors").string(), metrics = (dir / "m.jsonl").string();
  const std::string common = "--batch_size 100 --checkpoint '" + ckpt + "' --metrics '" + metrics + "'";
  Outcome first = run_args(dir, "--epochs 1 " + common);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(has(first.output, "epoch 1/1: 20 steps")) << first.output;
  Outcome second = run_args(dir, "--epochs 2 --resume '" + ckpt + "' " + common);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_TRUE(has(second.output, "resumed from " + ckpt + " at epoch 1, step 20, sample 0 of 2000")) << second.output;
  EXPECT_TRUE(has(second.output, "epoch 2/2: 20 steps")) << second.output;
  EXPECT_TRUE(has(second.output, "epoch 2 done")) << second.output;
  EXPECT_FALSE(has(second.output, "epoch 1/2")) << second.output;
  EXPECT_FALSE(has(second.output, "epoch 1 done")) << second.output;
  const std::vector<std::string> lines = lines_of(metrics);
  ASSERT_EQ(lines.size(), 2u) << "one metrics line per epoch";
  EXPECT_TRUE(has(lines[0], "\"epoch\":1,") && has(lines[0], "\"step\":20,")) << lines[0];
  EXPECT_TRUE(has(lines[1], "\"epoch\":2,") && has(lines[1], "\"step\":40,")) << lines[1];
  // A third run has nothing left to train: no epoch, no metrics line.
  Outcome third = run_args(dir, "--epochs 2 --resume '" + ckpt + "' " + common);
  ASSERT_EQ(third.exit_code, 0) << third.output;
  EXPECT_TRUE(has(third.output, "at epoch 2, step 40, sample 0")) << third.output;
  EXPECT_FALSE(has(third.output, " done:")) << third.output;
  EXPECT_EQ(lines_of(metrics).size(), 2u);
}

// 5 steps of 100 images took samples [0, 500) of the epoch's order. With batch size 300 the
// resumed run takes the other 1,500 in 5 steps (the old step-based skip jumped 5 batches of 300,
// losing 1,000 images, and ended at step 7).
TEST(LeNetCifar10, ResumesMidEpochWithAnotherBatchSizeWhereTheDataStopped) {
  const fs::path dir = scratch_dir("lenet_other_batch");
  const std::string ckpt = (dir / "c.safetensors").string(), metrics = (dir / "m.jsonl").string();
  Outcome first = run_args(dir, "--epochs 1 --batch_size 100 --max_steps 5 --checkpoint '" + ckpt + "'");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  Outcome second = run_args(dir, "--epochs 1 --batch_size 300 --resume '" + ckpt + "' --metrics '" + metrics + "'");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_TRUE(has(second.output, "at epoch 0, step 5, sample 500 of 2000 (written by 1 rank(s) with batch size 100)"))
      << second.output;
  EXPECT_TRUE(has(second.output, "epoch 1/1: 5 steps")) << second.output;
  const std::vector<std::string> lines = lines_of(metrics);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(has(lines[0], "\"step\":10,")) << lines[0];
  // The same checkpoint over an epoch of 400 images: its position lies beyond it.
  Outcome smaller = run_args(dir, "--epochs 1 --resume '" + ckpt + "'", 1, 400);
  EXPECT_EQ(smaller.exit_code, 1) << smaller.output;
  EXPECT_TRUE(has(smaller.output, "position 500 in epoch 0 lies beyond the epoch's 400 samples")) << smaller.output;
  // Another --seed is another data order: continuing it would repeat and skip images.
  Outcome reseeded = run_args(dir, "--epochs 1 --seed 3 --resume '" + ckpt + "'");
  EXPECT_EQ(reseeded.exit_code, 1) << reseeded.output;
  EXPECT_TRUE(has(reseeded.output, "its data order was drawn with seed 0, this run's with seed 3")) << reseeded.output;
}

// A checkpoint of one rank resumed by two: they share the 1,500 images left (750 each, 8 steps of
// 100: the step-based skip took 5 more steps of each rank's own 1,000 and ended at step 10). By
// three it is refused, naming both runs: 500 samples cannot be split evenly three ways.
TEST(LeNetCifar10, ResumesMidEpochWithAnotherWorldSizeOrRefusesNamingBoth) {
  const fs::path dir = scratch_dir("lenet_other_world");
  const std::string ckpt = (dir / "c.safetensors").string(), metrics = (dir / "m.jsonl").string();
  Outcome first = run_args(dir, "--epochs 1 --batch_size 100 --max_steps 5 --checkpoint '" + ckpt + "'");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  Outcome two = run_args(dir, "--epochs 1 --batch_size 100 --resume '" + ckpt + "' --metrics '" + metrics + "'", 2);
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_TRUE(has(two.output, "[rank 0] [I rank 0] resumed from " + ckpt + " at epoch 0, step 5, sample 500 of 2000"))
      << two.output;
  EXPECT_TRUE(has(two.output, "epoch 1/1: 8 steps")) << two.output;
  const std::vector<std::string> lines = lines_of(metrics);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(has(lines[0], "\"step\":13,")) << lines[0];
  Outcome three = run_args(dir, "--epochs 1 --batch_size 100 --resume '" + ckpt + "'", 3);
  EXPECT_NE(three.exit_code, 0) << three.output;
  EXPECT_TRUE(has(three.output, "written by 1 rank with batch size 100 after 500 samples of epoch 0; this run has 3 "
                                "ranks with batch size 100, which cannot share the rest of the epoch evenly"))
      << three.output;
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

// Step counts out of their range are refused before anything trains, naming the flag (-5 used to
// mean "no limit", as -1 does, and a negative warm-up timed the first steps).
TEST(LeNetCifar10, RefusesStepCountsOutOfRange) {
  const fs::path dir = scratch_dir("lenet_flags");
  for (const std::string flag : {"--max_steps -5", "--warmup_steps -2 --benchmark"}) {
    Outcome r = run_args(dir, "--epochs 1 " + flag, 1, 64);
    EXPECT_NE(r.exit_code, 0) << flag << ": " << r.output;
    EXPECT_TRUE(has(r.output, flag.substr(0, flag.find(' ')))) << flag << ": " << r.output;
    EXPECT_FALSE(has(r.output, "epoch 1 done")) << flag << ": " << r.output;
    EXPECT_FALSE(has(r.output, "images_per_s=")) << flag << ": " << r.output;
  }
}

}  // namespace
