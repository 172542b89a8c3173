// LeNet-5 on Fashion-MNIST (1x28x28): conv 1->6 k5 pad 2, pool, conv 6->16 k5, pool,
// 400 -> 120 -> 84 -> 10; SGD lr 0.01 momentum 0.9, batch 64. Reads Debian's dataset-fashion-mnist
// package by default. Prints test_accuracy=<number> after each epoch. --amp bf16|fp16 trains with
// mixed precision (autocast; fp16 with a GradScaler).

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "colony.h"
#include "examples/common/callers_folder.h"
#include "examples/lenet_cifar10/amp_mode.h"
#include "examples/lenet_cifar10/lenet.h"

using namespace colony;

int main(int argc, char** argv) {
  std::string data_dir = data::FashionMNIST::kDefaultRoot, checkpoint, metrics, device = "auto", amp_flag = "off";
  int epochs = 2, batch_size = 64, threads = 0, workers = 2;
  double lr = 0.01, momentum = 0.9;
  uint64_t seed = 0;
  CLI::App app{"Train LeNet-5 on Fashion-MNIST with Colony"};
  app.add_option("--data_dir", data_dir, "folder with the (gzipped) IDX files");
  app.add_option("--epochs", epochs)->check(CLI::PositiveNumber);
  app.add_option("--batch_size", batch_size)->check(CLI::PositiveNumber);
  app.add_option("--lr", lr)->check(CLI::NonNegativeNumber);
  app.add_option("--momentum", momentum)->check(CLI::NonNegativeNumber);
  app.add_option("--workers", workers)->check(CLI::NonNegativeNumber);
  app.add_option("--threads", threads, "CPU threads (0: COLONY_NUM_THREADS or all cores)")->check(CLI::NonNegativeNumber);
  app.add_option("--device", device, "cpu, cuda, cuda:N or auto");
  app.add_option("--seed", seed);
  app.add_option("--checkpoint", checkpoint, "training checkpoint written after each epoch");
  app.add_option("--metrics", metrics, "append one JSON line per epoch");
  app.add_option("--amp", amp_flag, "mixed precision: off, bf16 (bfloat16 autocast) or fp16 (float16 autocast + GradScaler)");
  CLI11_PARSE(app, argc, argv);
  examples::run_in_callers_folder();
  try {
    if (threads > 0) set_num_threads(threads);
    manual_seed(seed);
    const lenet::AmpMode amp = lenet::AmpMode::parse(amp_flag);
    Device dev = device == "auto" ? dist::local_device() : Device(device);
    auto model = std::make_shared<lenet::LeNet>(/*in_channels=*/1, /*conv1_padding=*/2);
    model->to(dev);
    optim::SGD opt(model->parameters(), optim::SGDOptions(lr).momentum(momentum));
    optim::GradScaler scaler(optim::GradScalerOptions().enabled(amp.uses_scaler()));
    // torchvision's usual Fashion-MNIST normalization.
    auto normalize = data::Normalize({0.2860}, {0.3530});
    auto train = std::make_shared<data::TransformedDataset>(data::FashionMNIST(data_dir, data::Split::kTrain).transform(normalize));
    auto test = std::make_shared<data::TransformedDataset>(data::FashionMNIST(data_dir, data::Split::kTest).transform(normalize));
    data::RandomSampler sampler(train->size(), seed);
    data::SequentialSampler test_sampler(test->size());
    data::DataLoader loader(train, sampler, data::DataLoaderOptions(batch_size).workers(workers));
    data::DataLoader test_loader(test, test_sampler, data::DataLoaderOptions(1000).workers(workers));
    int64_t step = 0;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      sampler.set_epoch(epoch);
      auto start = std::chrono::steady_clock::now();
      double loss_sum = 0;
      int64_t n = 0;
      for (auto& batch : loader) {
        opt.zero_grad();
        Tensor loss;
        {
          AutocastGuard autocast(dev.type, amp.dtype, amp.enabled);
          loss = F::cross_entropy(model->forward(batch.data.to(dev)), batch.target.to(dev));
        }
        scaler.scale(loss).backward();
        scaler.step(opt);
        scaler.update();
        loss_sum += loss.item<double>();
        ++n;
        ++step;
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      int64_t correct = 0, total = 0;
      {
        NoGradGuard no_grad;
        model->eval();
        AutocastGuard autocast(dev.type, amp.dtype, amp.enabled);
        for (auto& batch : test_loader) {
          Tensor pred = model->forward(batch.data.to(dev)).argmax(1);
          correct += (pred == batch.target.to(dev)).sum().item<int64_t>();
          total += batch.size();
        }
        model->train();
      }
      double acc = static_cast<double>(correct) / static_cast<double>(total);
      log::info("epoch {}: train_loss={} images_per_s={} amp={}", epoch + 1, loss_sum / n,
                static_cast<int64_t>(static_cast<double>(train->size()) / secs), amp.name());
      std::printf("test_accuracy=%.4f\n", acc);
      std::fflush(stdout);
      if (!metrics.empty()) {
        std::ofstream m(metrics, std::ios::app);
        m << nlohmann::json{{"epoch", epoch + 1}, {"step", step}, {"train_loss", loss_sum / n}, {"test_accuracy", acc}}.dump()
          << "\n";
      }
      if (!checkpoint.empty()) {
        optim::TrainingState s;
        s.epoch = epoch + 1;
        s.step = step;
        optim::save_checkpoint(checkpoint, *model, opt, s, &scaler);
      }
    }
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return 1;
  }
  return 0;
}
