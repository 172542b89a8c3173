// char_gpt run as a program on a small text it is given: it learns (the loss falls), prints the
// evaluations and a sample, writes its weights under PyTorch's names and resumes from its
// checkpoint, trains under colonyrun, says what to do when the text is missing, and refuses flags
// out of their range.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "colony.h"
#include "tests/data/data_test_util.h"
#include "tests/examples/run_program.h"

namespace {

namespace fs = std::filesystem;
using colony::data::testing::scratch_dir;
using colony::testing::has;
using colony::testing::Outcome;
using colony::testing::run_command;

// A text with structure to learn: a few short lines repeated.
fs::path write_text(const fs::path& dir) {
  fs::path file = dir / "input.txt";
  std::ofstream out(file);
  for (int i = 0; i < 200; ++i) out << "to be, or not to be: that is the question.\nwhether 'tis nobler in the mind\n";
  return file;
}

// A tiny model, one thread, under colonyrun when ranks > 1.
Outcome run_gpt(const fs::path& dir, const std::string& args, int ranks = 1) {
  const std::string program = fs::absolute("examples/char_gpt/char_gpt").string();
  const std::string launcher =
      ranks > 1 ? "'" + fs::absolute("distributed/colonyrun").string() + "' --master_port=0 --grace=2 --nproc_per_node=" +
                      std::to_string(ranks) + " "
                : "";
  return run_command("cd '" + dir.string() + "' && " + launcher + "'" + program +
                     "' --n_layer 1 --n_head 2 --n_embd 32 --block_size 16 --batch_size 8 --threads 1 "
                     "--eval_iters 4 --warmup_iters 5 --lr 3e-3 " +
                     args + " 2>&1");
}

// The "val_loss=X" figures a run printed, in order.
std::vector<double> val_losses(const std::string& output) {
  std::vector<double> out;
  std::regex re("val_loss=([0-9.]+)");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back(std::stod((*it)[1]));
  return out;
}

TEST(CharGpt, LearnsTheTextAndSamplesFromIt) {
  fs::path dir = scratch_dir("char_gpt_learns");
  fs::path text = write_text(dir);
  Outcome r = run_gpt(dir, "--data '" + text.string() + "' --max_iters 60 --eval_interval 30 --sample_tokens 40");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "vocabulary of 22")) << r.output;
  std::vector<double> losses = val_losses(r.output);
  ASSERT_EQ(losses.size(), 2u) << r.output;
  EXPECT_LT(losses[1], 2.5) << r.output;  // a uniform guess over 22 characters scores ln 22 = 3.09
  EXPECT_TRUE(has(r.output, "---- sample ----")) << r.output;
}

TEST(CharGpt, ResumesWhereTheCheckpointStopped) {
  fs::path dir = scratch_dir("char_gpt_resume");
  fs::path text = write_text(dir);
  // One schedule for all three runs (by default it ends at --max_iters, which differs here).
  const std::string common = "--data '" + text.string() + "' --eval_interval 10 --sample_tokens 0 --seed 3 --lr_decay_iters 20 ";
  Outcome whole = run_gpt(dir, common + "--max_iters 20");
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  Outcome first = run_gpt(dir, common + "--max_iters 10 --checkpoint '" + (dir / "ckpt").string() + "'");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  Outcome second = run_gpt(dir, common + "--max_iters 20 --resume '" + (dir / "ckpt").string() + "'");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_TRUE(has(second.output, "resumed from")) << second.output;
  // The same batches and state: the resumed run ends where the uninterrupted one did.
  ASSERT_FALSE(val_losses(whole.output).empty());
  ASSERT_FALSE(val_losses(second.output).empty());
  EXPECT_NEAR(val_losses(whole.output).back(), val_losses(second.output).back(), 1e-4)
      << whole.output << "\n---\n" << second.output;
  // Resumed at --max_iters already: nothing trains, the run says so and still samples.
  Outcome done = run_gpt(dir, "--data '" + text.string() + "' --seed 3 --max_iters 10 --sample_tokens 20 --resume '" +
                                  (dir / "ckpt").string() + "'");
  ASSERT_EQ(done.exit_code, 0) << done.output;
  EXPECT_TRUE(has(done.output, "nothing to train")) << done.output;
  EXPECT_TRUE(val_losses(done.output).empty()) << done.output;
  EXPECT_TRUE(has(done.output, "---- sample ----")) << done.output;
}

// --checkpoint writes the state_dict nanoGPT's model loads: its names (the tied head under both of
// them, as PyTorch's state_dict lists it), the configuration and vocabulary in the metadata, and
// the training state beside it.
TEST(CharGpt, CheckpointHoldsPyTorchsStateDict) {
  fs::path dir = scratch_dir("char_gpt_names");
  fs::path text = write_text(dir);
  const fs::path ckpt = dir / "ckpt.safetensors";
  Outcome r = run_gpt(dir, "--data '" + text.string() + "' --max_iters 2 --sample_tokens 0 --checkpoint '" +
                               ckpt.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir / "ckpt.safetensors.train"));
  colony::io::SafetensorsContents c = colony::io::load_safetensors(ckpt.string());
  const std::map<std::string, colony::Tensor> tensors(c.tensors.begin(), c.tensors.end());
  std::set<std::string> names;
  for (auto& [name, t] : tensors) names.insert(name);
  // nanoGPT's model.py with n_layer 1, bias=True (run_gpt's model).
  std::set<std::string> expected{"transformer.wte.weight", "transformer.wpe.weight", "transformer.ln_f.weight",
                                 "transformer.ln_f.bias", "lm_head.weight"};
  for (const char* m : {"ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj"})
    for (const char* p : {"weight", "bias"}) expected.insert(std::string("transformer.h.0.") + m + "." + p);
  ASSERT_EQ(names, expected);
  EXPECT_TRUE(colony::equal(tensors.at("transformer.wte.weight"), tensors.at("lm_head.weight")))
      << "the tied head's two names hold different values";
  EXPECT_EQ(c.metadata["n_layer"], "1");
  EXPECT_EQ(c.metadata["n_head"], "2");
  EXPECT_EQ(c.metadata["step"], "2");
  EXPECT_EQ(c.metadata["vocabulary"].size(), 22u);
}

TEST(CharGpt, TrainsDataParallelUnderColonyrun) {
  fs::path dir = scratch_dir("char_gpt_ddp");
  fs::path text = write_text(dir);
  Outcome r = run_gpt(dir, "--data '" + text.string() + "' --max_iters 6 --eval_interval 3 --sample_tokens 0", 2);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "2 rank(s)")) << r.output;
  EXPECT_EQ(val_losses(r.output).size(), 2u) << r.output;  // printed by rank 0 only
}

// ZeRO stages 1 and 2 shard the optimizer state (and the gradients) and train the same model:
// the losses equal plain DDP's.
TEST(CharGpt, ZeroStagesTrainAsPlainDdpDoes) {
  fs::path dir = scratch_dir("char_gpt_zero");
  fs::path text = write_text(dir);
  std::vector<double> ddp;
  for (int stage = 0; stage <= 2; ++stage) {
    Outcome r = run_gpt(dir, "--data '" + text.string() + "' --max_iters 6 --eval_interval 3 --sample_tokens 0 --zero " +
                                 std::to_string(stage),
                        2);
    ASSERT_EQ(r.exit_code, 0) << "--zero " << stage << "\n" << r.output;
    std::vector<double> losses = val_losses(r.output);
    ASSERT_EQ(losses.size(), 2u) << r.output;
    if (stage == 0) ddp = losses;
    else
      for (size_t i = 0; i < losses.size(); ++i) EXPECT_NEAR(losses[i], ddp[i], 2e-4) << "--zero " << stage;
  }
}

// Without --data it reads data/shakespeare/input.txt, which a fresh clone does not have.
TEST(CharGpt, MissingTextSaysHowToGetIt) {
  fs::path dir = scratch_dir("char_gpt_missing");
  Outcome r = run_gpt(dir, "--max_iters 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "tools/fetch_text.py")) << r.output;
}

// Flags out of their range are refused before anything trains, naming the flag.
TEST(CharGpt, RefusesFlagsOutOfRange) {
  fs::path dir = scratch_dir("char_gpt_flags");
  fs::path text = write_text(dir);
  for (const std::string flag : {"--lr_decay_iters -5", "--warmup_steps -1", "--amp fp8"}) {
    Outcome r = run_gpt(dir, "--data '" + text.string() + "' --max_iters 1 " + flag);
    EXPECT_NE(r.exit_code, 0) << flag << ": " << r.output;
    EXPECT_TRUE(has(r.output, flag.substr(0, flag.find(' ')))) << flag << ": " << r.output;
    EXPECT_FALSE(has(r.output, "val_loss=")) << flag << ": " << r.output;
  }
}

}  // namespace
