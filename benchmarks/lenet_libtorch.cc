// libtorch (PyTorch's C++ API) reference for the LeNet-CIFAR10 training benchmark: the same network,
// optimizer (SGD lr 0.001, momentum 0.9), loss and batch size as `lenet_cifar10 --benchmark`, with
// 16 random CIFAR-shaped batches already in memory, so only the training step (zero_grad, forward,
// backward, step) is timed. Never part of Colony's build: benchmarks/lenet_libtorch.sh compiles it
// against the libtorch that a PyTorch wheel carries (torch/include, torch/lib) or Debian's.
//
//   benchmarks/lenet_libtorch.sh /tmp/torch2 --batch 32 --threads 2 --steps 1500
//   benchmarks/lenet_libtorch.sh debian --batch 32 --threads 2 --steps 1500
//
// Prints one line: images_per_s=<number> (and the libtorch version and thread count first).
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct LeNetImpl : torch::nn::Module {
  LeNetImpl()
      : conv1(register_module("conv1", torch::nn::Conv2d(3, 6, 5))),
        conv2(register_module("conv2", torch::nn::Conv2d(6, 16, 5))),
        fc1(register_module("fc1", torch::nn::Linear(16 * 5 * 5, 120))),
        fc2(register_module("fc2", torch::nn::Linear(120, 84))),
        fc3(register_module("fc3", torch::nn::Linear(84, 10))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    x = torch::flatten(x, 1);
    x = torch::relu(fc1->forward(x));
    x = torch::relu(fc2->forward(x));
    return fc3->forward(x);
  }

  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc1, fc2, fc3;
};
TORCH_MODULE(LeNet);

int int_arg(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int batch = int_arg(argc, argv, "--batch", 32);
  const int threads = int_arg(argc, argv, "--threads", 2);
  const int steps = int_arg(argc, argv, "--steps", 1500);
  const int warmup = int_arg(argc, argv, "--warmup", 50);
  if (batch <= 0 || threads <= 0 || steps <= 0 || warmup < 0) {
    std::fprintf(stderr, "usage: lenet_libtorch [--batch N] [--threads N] [--steps N] [--warmup N] (positive)\n");
    return 2;
  }
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  LeNet model;
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.001).momentum(0.9));
  std::vector<torch::Tensor> data, target;
  for (int i = 0; i < 16; ++i) {
    data.push_back(torch::randn({batch, 3, 32, 32}));
    target.push_back(torch::randint(0, 10, {batch}, torch::kLong));
  }
  std::printf("libtorch %s, %d threads, batch %d\n", TORCH_VERSION, torch::get_num_threads(), batch);
  std::chrono::steady_clock::time_point start;
  for (int i = 0; i < warmup + steps; ++i) {
    if (i == warmup) start = std::chrono::steady_clock::now();
    opt.zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(data[i % 16]), target[i % 16]);
    loss.backward();
    opt.step();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("images_per_s=%.1f\n", static_cast<double>(batch) * steps / seconds);
  return 0;
}
