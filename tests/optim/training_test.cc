// End-to-end training behaviour: a small LeNet on a fixed dataset learns, runs are bit-identical
// for a seed, and a checkpoint/resume continues exactly like an uninterrupted run.
#include <gtest/gtest.h>

#include "autograd/autograd.h"
#include "data/data.h"
#include "nn/nn.h"
#include "optim/optim.h"
#include "runtime/cuda.h"
#include "tests/test_util.h"
#include "tests/tf32_guard.h"

namespace colony {
namespace {

class SmallLeNet : public nn::Module {
 public:
  SmallLeNet() {
    conv1 = register_module("conv1", std::make_shared<nn::Conv2d>(nn::Conv2dOptions(3, 6, 5)));
    conv2 = register_module("conv2", std::make_shared<nn::Conv2d>(nn::Conv2dOptions(6, 16, 5)));
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(16 * 5 * 5, 32));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(32, 10));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = F::max_pool2d(F::relu(conv1->forward(x)), 2);
    h = F::max_pool2d(F::relu(conv2->forward(h)), 2);
    return fc2->forward(F::relu(fc1->forward(h.flatten(1))));
  }
  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::Linear> fc1, fc2;
};

// 512 synthetic CIFAR-shaped images (the first ones of the synthetic set), batches of 32.
std::vector<data::Batch> fixed_batches() {
  auto ds = std::make_shared<data::TransformedDataset>(
      data::SyntheticCIFAR10(data::Split::kTrain, 7).transform(data::Normalize({0.5, 0.5, 0.5}, {0.5, 0.5, 0.5})));
  data::SequentialSampler sampler(512);
  data::DataLoader loader(ds, sampler, data::DataLoaderOptions(32));
  std::vector<data::Batch> out;
  for (auto& b : loader) out.push_back({raw::clone(b.data), raw::clone(b.target)});
  return out;
}

// Trains for `steps` steps from `first` (cycling over the batches) and returns the losses.
std::vector<double> train(SmallLeNet& model, optim::Optimizer& opt, const std::vector<data::Batch>& batches, int first,
                          int steps) {
  std::vector<double> losses;
  for (int s = first; s < first + steps; ++s) {
    const data::Batch& b = batches[s % batches.size()];
    opt.zero_grad();
    Tensor loss = F::cross_entropy(model.forward(b.data), b.target);
    loss.backward();
    opt.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

TEST(Training, LossFallsAndRunsAreBitIdentical) {
  std::vector<data::Batch> batches = fixed_batches();
  auto run = [&] {
    manual_seed(11);
    SmallLeNet model;
    optim::SGD opt(model.parameters(), optim::SGDOptions(0.01).momentum(0.9));
    return train(model, opt, batches, 0, 64);
  };
  std::vector<double> a = run(), b = run();
  EXPECT_EQ(a, b);  // bit for bit
  double first = (a[0] + a[1] + a[2] + a[3]) / 4, last = (a[60] + a[61] + a[62] + a[63]) / 4;
  EXPECT_LT(last, first - 0.3) << "first " << first << " last " << last;
}

TEST(Training, CheckpointResumeContinuesExactly) {
  std::vector<data::Batch> batches = fixed_batches();
  manual_seed(5);
  SmallLeNet full;
  optim::SGD full_opt(full.parameters(), optim::SGDOptions(0.01).momentum(0.9));
  std::vector<double> uninterrupted = train(full, full_opt, batches, 0, 12);

  manual_seed(5);
  SmallLeNet first;
  optim::SGD first_opt(first.parameters(), optim::SGDOptions(0.01).momentum(0.9));
  train(first, first_opt, batches, 0, 6);
  std::string path = ::testing::TempDir() + "/resume.safetensors";
  optim::TrainingState st;
  st.epoch = 0;
  st.step = 6;
  optim::save_checkpoint(path, first, first_opt, st);

  manual_seed(999);  // a different start: everything must come from the checkpoint
  SmallLeNet resumed;
  optim::SGD resumed_opt(resumed.parameters(), optim::SGDOptions(0.01).momentum(0.9));
  optim::TrainingState loaded = optim::load_checkpoint(path, resumed, resumed_opt);
  EXPECT_EQ(loaded.step, 6);
  std::vector<double> after = train(resumed, resumed_opt, batches, 6, 6);
  EXPECT_EQ(after, std::vector<double>(uninterrupted.begin() + 6, uninterrupted.end()));

  nn::save(resumed, path + ".weights");
  EXPECT_TRUE(testing::throws_with([&] { optim::load_checkpoint(path + ".weights", resumed, resumed_opt); },
                                   "not a Colony training checkpoint"));
}

// The step never talks to the host: forward, loss, backward and SGD only queue device work. The
// host waits only where the program asks for a value (here the loss every 4 steps).
TEST(Training, AGpuStepWaitsForTheHostOnlyWhenAValueIsRead_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  std::vector<data::Batch> batches;
  for (const data::Batch& b : fixed_batches()) batches.push_back({b.data.to(dev), b.target.to(dev)});
  manual_seed(3);
  SmallLeNet model;
  model.to(dev);
  optim::SGD opt(model.parameters(), optim::SGDOptions(0.01).momentum(0.9));
  auto step = [&](int s) {
    opt.zero_grad();
    Tensor loss = F::cross_entropy(model.forward(batches[s % batches.size()].data), batches[s % batches.size()].target);
    loss.backward();
    opt.step();
    return loss;
  };
  for (int s = 0; s < 2; ++s) step(s);  // first calls choose algorithms and allocate
  cuda::synchronize();
  const int64_t before = cuda::host_sync_count();
  double logged = 0;
  for (int s = 0; s < 8; ++s) {
    Tensor loss = step(s);
    if (s % 4 == 3) logged += loss.item<double>();
  }
  EXPECT_EQ(cuda::host_sync_count() - before, 2) << "syncs besides the two loss reads";
  EXPECT_TRUE(std::isfinite(logged));
}

// ---------- CUDA against CPU ----------

// The same weights and batches on both devices; SGD with momentum (the multi-tensor kernels on
// CUDA) over 8 steps. Each step's loss must be within loss_tol * (1 + step) of the CPU's, and the
// weights after the steps within (rtol, atol).
void expect_cuda_steps_match_the_cpu(double loss_tol, double rtol, double atol) {
  std::vector<data::Batch> batches = fixed_batches();
  manual_seed(21);
  SmallLeNet cpu;
  SmallLeNet gpu;
  gpu.load_state_dict(cpu.state_dict());
  gpu.to(Device::cuda(0));
  optim::SGD cpu_opt(cpu.parameters(), optim::SGDOptions(0.01).momentum(0.9));
  optim::SGD gpu_opt(gpu.parameters(), optim::SGDOptions(0.01).momentum(0.9));
  for (int s = 0; s < 8; ++s) {
    const data::Batch& b = batches[s];
    cpu_opt.zero_grad();
    gpu_opt.zero_grad();
    Tensor cpu_loss = F::cross_entropy(cpu.forward(b.data), b.target);
    Tensor gpu_loss = F::cross_entropy(gpu.forward(raw::to(b.data, Device::cuda(0), kFloat32)),
                                       raw::to(b.target, Device::cuda(0), kInt64));
    cpu_loss.backward();
    gpu_loss.backward();
    cpu_opt.step();
    gpu_opt.step();
    EXPECT_NEAR(gpu_loss.item<double>(), cpu_loss.item<double>(), loss_tol * (1 + s)) << "step " << s;
  }
  auto cpu_params = cpu.named_parameters(), gpu_params = gpu.named_parameters();
  ASSERT_EQ(cpu_params.size(), gpu_params.size());
  for (size_t i = 0; i < cpu_params.size(); ++i) {
    EXPECT_TRUE(testing::all_close(gpu_params[i].second, cpu_params[i].second, rtol, atol)) << cpu_params[i].first;
  }
}

// float32 on both, TF32 off: the losses and weights agree to float32 rounding amplified by a few
// steps (cuDNN and cuBLAS sum in other orders than the CPU).
TEST(Training, LeNetStepsOnCudaEqualTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  testing::Tf32Guard tf32(false);
  expect_cuda_steps_match_the_cpu(1e-4, 1e-3, 1e-4);
}

// With TF32 on for cuDNN and cuBLAS (what `backends::cuda::matmul::set_allow_tf32(true)` users
// run): inputs of every product rounded to 10 mantissa bits, about 1e-3 relative per product, so
// the loss (about 2.3) may move by a few 1e-3 a step. The bounds are 10x the float32 test's and
// still catch a wrong convolution or product (the loss would be off by far more than 1e-3).
TEST(Training, LeNetStepsOnCudaWithTf32StayCloseToTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  testing::Tf32Guard tf32(true);
  expect_cuda_steps_match_the_cpu(1e-2, 2e-2, 2e-3);
}

// float16 autocast + GradScaler, checkpointed mid-run with the scaler: the resumed run continues
// bit for bit. A huge initial scale makes the first steps overflow and back off, and a short growth
// interval makes the scale grow again, so the scale and growth count must come from the file.
std::vector<double> train_amp(SmallLeNet& model, optim::Optimizer& opt, optim::GradScaler& scaler,
                              const std::vector<data::Batch>& batches, int first, int steps) {
  std::vector<double> losses;
  for (int s = first; s < first + steps; ++s) {
    const data::Batch& b = batches[s % batches.size()];
    opt.zero_grad();
    Tensor loss;
    {
      AutocastGuard amp(DeviceType::CPU, kFloat16);
      loss = F::cross_entropy(model.forward(b.data), b.target);
    }
    scaler.scale(loss).backward();
    scaler.step(opt);
    scaler.update();
    losses.push_back(loss.item<double>());
    losses.push_back(scaler.get_scale());
  }
  return losses;
}

TEST(Training, AmpCheckpointResumeContinuesExactly) {
  std::vector<data::Batch> batches = fixed_batches();
  const auto scaler_options = optim::GradScalerOptions().init_scale(16777216.0).growth_interval(2);
  manual_seed(5);
  SmallLeNet full;
  optim::SGD full_opt(full.parameters(), optim::SGDOptions(0.01).momentum(0.9));
  optim::GradScaler full_scaler(scaler_options);
  std::vector<double> uninterrupted = train_amp(full, full_opt, full_scaler, batches, 0, 12);
  EXPECT_LT(uninterrupted[1], 16777216.0);  // the first step overflowed and backed off

  manual_seed(5);
  SmallLeNet first;
  optim::SGD first_opt(first.parameters(), optim::SGDOptions(0.01).momentum(0.9));
  optim::GradScaler first_scaler(scaler_options);
  train_amp(first, first_opt, first_scaler, batches, 0, 5);
  std::string path = ::testing::TempDir() + "/resume_amp.safetensors";
  optim::TrainingState st;
  st.step = 5;
  optim::save_checkpoint(path, first, first_opt, st, &first_scaler);

  manual_seed(999);
  SmallLeNet resumed;
  optim::SGD resumed_opt(resumed.parameters(), optim::SGDOptions(0.01).momentum(0.9));
  optim::GradScaler resumed_scaler;  // default options: everything must come from the checkpoint
  optim::load_checkpoint(path, resumed, resumed_opt, &resumed_scaler);
  EXPECT_EQ(resumed_scaler.get_scale(), first_scaler.get_scale());
  EXPECT_EQ(resumed_scaler.growth_tracker(), first_scaler.growth_tracker());
  std::vector<double> after = train_amp(resumed, resumed_opt, resumed_scaler, batches, 5, 7);
  EXPECT_EQ(after, std::vector<double>(uninterrupted.begin() + 10, uninterrupted.end()));

  optim::save_checkpoint(path, first, first_opt, st);  // without the scaler
  EXPECT_TRUE(testing::throws_with([&] { optim::load_checkpoint(path, resumed, resumed_opt, &resumed_scaler); },
                                   "holds no GradScaler state"));
}

}  // namespace
}  // namespace colony
