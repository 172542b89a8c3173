#include "optim/checkpoint.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "nn/linear.h"
#include "nn/safetensors.h"
#include "optim/sgd.h"
#include "tensor/raw_ops.h"
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

}  // namespace
}  // namespace colony::optim
