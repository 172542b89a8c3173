// Small layers without parameters: activations, reshaping, dropout, pooling; and Sequential.
#pragma once

#include <memory>
#include <vector>

#include "nn/functional.h"
#include "nn/module.h"
#include "nn/options.h"

namespace colony::nn {

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& input) override { return functional::relu(input); }
};

class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1) : start_dim_(start_dim), end_dim_(end_dim) {}
  Tensor forward(const Tensor& input) override { return functional::flatten(input, start_dim_, end_dim_); }

 private:
  int64_t start_dim_, end_dim_;
};

// Active only in training mode (train()/eval()).
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& input) override { return functional::dropout(input, p_, is_training()); }
  std::string extra_repr() const override { return "p=" + std::to_string(p_); }

 private:
  double p_;
};

using MaxPool2dOptions = functional::MaxPool2dFuncOptions;
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(const MaxPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::max_pool2d(input, options); }
  MaxPool2dOptions options;
};

using AvgPool2dOptions = functional::AvgPool2dFuncOptions;
class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(const AvgPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::avg_pool2d(input, options); }
  AvgPool2dOptions options;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Size2 output_size) : output_size(output_size) {}
  Tensor forward(const Tensor& input) override { return functional::adaptive_avg_pool2d(input, output_size); }
  Size2 output_size;
};

// Runs its modules in order; children are named "0", "1", ... as in PyTorch.
class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  void push_back(std::shared_ptr<Module> module);
  Tensor forward(const Tensor& input) override;
  size_t size() const { return modules_.size(); }
  std::shared_ptr<Module> operator[](size_t i) const { return modules_.at(i); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace colony::nn
