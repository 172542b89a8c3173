#include "optim/checkpoint.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "nn/linear.h"
#include "nn/safetensors.h"
#include "optim/sgd.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony::optim {
namespace {

using colony::testing::throws_with;

// Writes a checkpoint, then rewrites one metadata entry as a hand-edited or corrupt file would.
std::string checkpoint_with(const std::string& key, const std::string& value, nn::Module& model, Optimizer& opt) {
  const std::string path = ::testing::TempDir() + "/ckpt_" + key + ".safetensors";
  TrainingState st;
  st.epoch = 3;
  st.step = 30;
  save_checkpoint(path, model, opt, st);
  io::SafetensorsContents c = io::load_safetensors(path);
  c.metadata[key] = value;
  io::save_safetensors(path, c.tensors, c.metadata);
  return path;
}

// stoull read "-1" as 2^64-1 (epoch -1 once an int64) and 2^63 became INT64_MIN: a resumed
// lenet_cifar10 then counted epochs up from there, for ever.
TEST(Checkpoint, CountersOutOfRangeAreRefused) {
  nn::Linear model(2, 2);
  SGD opt(model.parameters(), SGDOptions(0.1).momentum(0.9));
  const std::string in_range = "in [0, 9223372036854775807]";
  for (const std::string bad : {"-1", "9223372036854775808", "18446744073709551616", " 5", "+5", "5x", "", "1e3"}) {
    const std::string path = checkpoint_with("epoch", bad, model, opt);
    EXPECT_TRUE(throws_with([&] { load_checkpoint(path, model, opt); },
                            "checkpoint " + path + ": metadata \"epoch\" = \"" + bad + "\" is not a decimal integer " + in_range))
        << bad;
  }
  const std::string path = checkpoint_with("step", "9223372036854775808", model, opt);
  EXPECT_TRUE(throws_with([&] { load_checkpoint(path, model, opt); }, "metadata \"step\" = \"9223372036854775808\""));
  // The generator's state spans all of uint64.
  const std::string seed = checkpoint_with("rng_seed", "18446744073709551615", model, opt);
  EXPECT_EQ(load_checkpoint(seed, model, opt).rng_seed, 18446744073709551615u);
  const std::string max_epoch = checkpoint_with("epoch", "9223372036854775807", model, opt);
  EXPECT_EQ(load_checkpoint(max_epoch, model, opt).epoch, 9223372036854775807);
}

TEST(Checkpoint, HyperParametersAreChecked) {
  nn::Linear model(2, 2);
  SGD opt(model.parameters(), SGDOptions(0.1).momentum(0.9));
  const std::string path = ::testing::TempDir() + "/ckpt_lr.safetensors";
  save_checkpoint(path, model, opt, TrainingState{});
  io::SafetensorsContents c = io::load_safetensors(path);
  for (auto& [n, t] : c.tensors)
    if (n == "optim.param_groups.0.lr") t = raw::scalar_tensor(-0.001, kFloat64);
  io::save_safetensors(path, c.tensors, c.metadata);
  EXPECT_TRUE(throws_with([&] { load_checkpoint(path, model, opt); },
                          "checkpoint " + path + ": optimizer load_state_dict: group 0: SGD: invalid learning rate -0.001"));
  EXPECT_EQ(opt.lr(), 0.1);
}

// What a run of 1 rank with batch size 32, stopped 50 steps into epoch 2 of 50,000 samples, records.
TrainingState stopped_mid_epoch() {
  TrainingState st;
  st.epoch = 2;
  st.step = 2 * 1563 + 50;
  st.epoch_samples = 50 * 32;
  st.data_seed = 7;
  st.world_size = 1;
  st.batch_size = 32;
  return st;
}

TEST(Checkpoint, TheDataPositionRoundTrips) {
  nn::Linear model(2, 2);
  SGD opt(model.parameters(), SGDOptions(0.1));
  const std::string path = ::testing::TempDir() + "/ckpt_position.safetensors";
  TrainingState st = stopped_mid_epoch();
  st.extra["note"] = "kept";
  save_checkpoint(path, model, opt, st);
  const TrainingState back = load_checkpoint(path, model, opt);
  EXPECT_EQ(back.epoch, 2);
  EXPECT_EQ(back.step, 2 * 1563 + 50);
  EXPECT_EQ(back.epoch_samples, 1600);
  EXPECT_EQ(back.data_seed, 7u);
  EXPECT_EQ(back.world_size, 1);
  EXPECT_EQ(back.batch_size, 32);
  EXPECT_EQ(back.extra, (std::map<std::string, std::string>{{"note", "kept"}}));
  // Not recorded (world_size 0): none of it is written, and it reads back as not recorded.
  save_checkpoint(path, model, opt, TrainingState{});
  EXPECT_EQ(load_checkpoint(path, model, opt).world_size, 0);
  EXPECT_EQ(io::load_safetensors(path).metadata.count("epoch_samples"), 0u);
  // Half a position, or a world of 0 ranks, is a damaged file.
  const std::string half = checkpoint_with("world_size", "2", model, opt);
  EXPECT_TRUE(throws_with([&] { load_checkpoint(half, model, opt); }, "metadata has no \"batch_size\""));
  save_checkpoint(path, model, opt, stopped_mid_epoch());
  io::SafetensorsContents c = io::load_safetensors(path);
  c.metadata["world_size"] = "0";
  io::save_safetensors(path, c.tensors, c.metadata);
  EXPECT_TRUE(throws_with([&] { load_checkpoint(path, model, opt); },
                          "metadata world_size 0 and batch_size 32 must both be at least 1"));
}

// The position is in samples of the whole job, so other world sizes and batch sizes continue the
// same stream: 1,600 samples are shared by 2, 4 or 5 ranks, at any batch size.
TEST(Checkpoint, ResumePositionHoldsForAnyWorldSizeThatSharesTheRest) {
  const TrainingState st = stopped_mid_epoch();
  for (int64_t world : {1, 2, 4, 5, 8})
    for (int64_t batch : {1, 32, 64, 100}) EXPECT_EQ(resume_position(st, "c", 50000, 7, world, batch), 1600);
  TrainingState at_epoch_end = st;
  at_epoch_end.epoch = 3;
  at_epoch_end.epoch_samples = 0;
  EXPECT_EQ(resume_position(at_epoch_end, "c", 50000, 7, 3, 48), 0);
}

TEST(Checkpoint, ResumePositionRefusesWhatItCannotContinue) {
  const TrainingState st = stopped_mid_epoch();
  // 1,600 over 3 ranks: they would take different numbers of samples. Both runs are named.
  EXPECT_TRUE(throws_with([&] { resume_position(st, "c.st", 50000, 7, 3, 64); },
                          "checkpoint c.st: written by 1 rank with batch size 32 after 1600 samples of epoch 2; this "
                          "run has 3 ranks with batch size 64, which cannot share the rest of the epoch evenly (1600 is "
                          "not a multiple of 3)"));
  EXPECT_TRUE(throws_with([&] { resume_position(st, "c.st", 50000, 8, 1, 32); },
                          "its data order was drawn with seed 7, this run's with seed 8"));
  EXPECT_TRUE(throws_with([&] { resume_position(st, "c.st", 1600, 7, 1, 32); },
                          "position 1600 in epoch 2 lies beyond the epoch's 1600 samples"));
  // The step of 2^62 at epoch 0 that used to train 0 steps and exit 0.
  TrainingState huge_step;
  huge_step.step = int64_t{1} << 62;
  huge_step.world_size = 1;
  huge_step.batch_size = 32;
  EXPECT_TRUE(throws_with([&] { resume_position(huge_step, "c.st", 50000, 0, 1, 32); },
                          "step 4611686018427387904 is more than 0 whole epochs of 50000 samples and 0 samples of the "
                          "next can hold"));
  TrainingState huge_epoch = huge_step;
  huge_epoch.epoch = int64_t{1} << 62;  // epoch x epoch_size overflows int64: still compared exactly
  EXPECT_EQ(resume_position(huge_epoch, "c.st", 50000, 0, 1, 32), 0);
  EXPECT_TRUE(throws_with([&] { resume_position(TrainingState{}, "c.st", 50000, 0, 1, 32); },
                          "checkpoint c.st: records no data position"));
}

}  // namespace
}  // namespace colony::optim
