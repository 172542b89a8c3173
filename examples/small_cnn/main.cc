// A small CNN that is not LeNet, written the way a PyTorch C++ user writes it: conv-BN-ReLU-pool
// blocks in named Sequentials, adaptive pooling, dropout, AdamW, StepLR, gradient clipping and
// save/load, on a TensorDataset of random images (2 epochs, a few seconds on a CPU).
// The README's "Using the nn API" section is the code between the readme markers, checked by
// //examples/small_cnn:readme_test; //examples/small_cnn:small_cnn_test runs it.
// [readme-begin]
#include <iostream>

#include "colony.h"
using namespace colony;

// conv 3x3 -> batch norm -> ReLU (in place) -> 2x2 max pool, children named as in PyTorch.
std::shared_ptr<nn::Sequential> block(int64_t in, int64_t out) {
  return std::make_shared<nn::Sequential>(std::initializer_list<nn::NamedModule>{
      {"conv", std::make_shared<nn::Conv2d>(nn::Conv2dOptions(in, out, 3).padding(1).bias(false))},
      {"bn", std::make_shared<nn::BatchNorm2d>(out)},
      {"relu", std::make_shared<nn::ReLU>(nn::ReLUOptions().inplace(true))},
      {"pool", std::make_shared<nn::MaxPool2d>(2)}});
}

struct Net : nn::Module {
  Net() {
    features = register_module("features", std::make_shared<nn::Sequential>(
                                                std::initializer_list<std::shared_ptr<nn::Module>>{
                                                    block(3, 16), block(16, 32)}));
    pool = register_module("pool", std::make_shared<nn::AdaptiveAvgPool2d>(1));
    dropout = register_module("dropout", std::make_shared<nn::Dropout>(0.25));
    fc = register_module("fc", std::make_shared<nn::Linear>(32, 10));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = pool->forward(features->forward(x)).flatten(1);
    return fc->forward(dropout->forward(h));
  }
  std::shared_ptr<nn::Sequential> features;
  std::shared_ptr<nn::AdaptiveAvgPool2d> pool;
  std::shared_ptr<nn::Dropout> dropout;
  std::shared_ptr<nn::Linear> fc;
};

int main(int argc, char** argv) {
  manual_seed(0);
  // 512 random 3x16x16 images and labels; any data::Dataset (CIFAR10, MNIST, ...) works the same.
  data::TensorDataset dataset(randn({512, 3, 16, 16}), randint(0, 10, {512}));
  data::RandomSampler sampler(dataset.size(), /*seed=*/0);
  data::DataLoader loader(dataset, sampler, data::DataLoaderOptions(64).workers(2));

  auto model = std::make_shared<Net>();  // modules are shared_ptrs: call model->forward(x)
  std::cout << *model << "\n";           // printed as PyTorch prints it
  optim::AdamW optimizer(model->parameters(), optim::AdamWOptions(1e-3).betas({0.9, 0.999}));
  optim::StepLR scheduler(optimizer, /*step_size=*/1, /*gamma=*/0.5);

  for (int epoch = 0; epoch < 2; ++epoch) {
    model->train();
    sampler.set_epoch(epoch);
    double total = 0;
    int64_t batches = 0;
    for (auto& batch : loader) {
      optimizer.zero_grad();
      Tensor loss = F::cross_entropy(model->forward(batch.data), batch.target);
      loss.backward();
      nn::utils::clip_grad_norm_(model->parameters(), /*max_norm=*/1.0);
      optimizer.step();
      total += loss.item();
      ++batches;
    }
    scheduler.step();
    std::cout << "epoch " << epoch << " loss " << total / batches << " lr " << optimizer.lr() << "\n";
  }

  std::string path = argc > 1 ? argv[1] : "small_cnn.safetensors";
  nn::save(model, path);
  auto restored = std::make_shared<Net>();
  nn::load(restored, path);
  model->eval();
  restored->eval();
  NoGradGuard no_grad;
  Tensor x = randn({4, 3, 16, 16});
  std::cout << "restored model agrees: " << (allclose(model->forward(x), restored->forward(x)) ? "yes" : "no")
            << "\n";
}
// [readme-end]
