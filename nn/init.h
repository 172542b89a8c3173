// Parameter initialization (torch.nn.init). All functions fill in place without recording
// autograd history and return the tensor. Gains and fan computations follow PyTorch exactly, so a
// Colony model starts from the same distribution as its PyTorch twin.
#pragma once

#include <string>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace colony::nn::init {

enum class FanMode { FanIn, FanOut };
enum class Nonlinearity { Linear, Conv, Sigmoid, Tanh, ReLU, LeakyReLU };

// calculate_gain: linear/conv/sigmoid 1, tanh 5/3, relu sqrt(2), leaky_relu sqrt(2 / (1 + a^2)).
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);
// fan_in = size(1) * receptive field, fan_out = size(0) * receptive field (needs >= 2 dims).
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);

Tensor& uniform_(Tensor& t, double a = 0.0, double b = 1.0, Generator* gen = nullptr);
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
Tensor& constant_(Tensor& t, double value);
Tensor& zeros_(Tensor& t);
Tensor& ones_(Tensor& t);
// bound = gain * sqrt(3 / fan), gain from `nonlinearity` with parameter a.
Tensor& kaiming_uniform_(Tensor& t, double a = 0.0, FanMode mode = FanMode::FanIn,
                         Nonlinearity nonlinearity = Nonlinearity::LeakyReLU, Generator* gen = nullptr);
Tensor& kaiming_normal_(Tensor& t, double a = 0.0, FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU, Generator* gen = nullptr);
Tensor& xavier_uniform_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
Tensor& xavier_normal_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);

// While a SkipInitGuard lives on this thread, every function above leaves its tensor as it is and
// draws nothing. Modules built under one hold uninitialized parameters: nn::utils::skip_init
// (skip_init.h) builds them so, and a transformer stack builds its copies of a layer so before they
// take the layer's values (PyTorch's deepcopy draws nothing either). Guards nest.
class SkipInitGuard {
 public:
  SkipInitGuard();
  ~SkipInitGuard();
  SkipInitGuard(const SkipInitGuard&) = delete;
  SkipInitGuard& operator=(const SkipInitGuard&) = delete;
  static bool active();

 private:
  bool previous_;
};

}  // namespace colony::nn::init
