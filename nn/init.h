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

// torch.nn.init.trunc_normal_: normal(mean, std) truncated to [a, b], by torch's algorithm: uniform
// in [2 cdf(a') - 1, 2 cdf(b') - 1] (a', b' standardized), erfinv, times std * sqrt(2), plus mean,
// clamped to [a, b]; logs torch's warning when mean is more than 2 std outside [a, b]. Colony's
// generator is Philox (tensor/random.h), torch's CPU generator a Mersenne twister: the same seed
// draws other numbers than torch's, from the same distribution.
Tensor& trunc_normal_(Tensor& t, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0,
                      Generator* gen = nullptr);
// torch.nn.init.orthogonal_: t viewed as [size(0), numel / size(0)] becomes (semi-)orthogonal, the Q
// of the QR factorization (colony::linalg::qr) of a standard normal matrix (transposed when wider
// than tall), its columns' signs set by R's diagonal as torch's, times gain. Needs >= 2 dims.
Tensor& orthogonal_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
// torch.nn.init.sparse_: normal(0, std), then ceil(sparsity * rows) random rows of each column set
// to zero. 2-D only. The rows come from `gen` too (torch draws them from its global generator).
Tensor& sparse_(Tensor& t, double sparsity, double std = 0.01, Generator* gen = nullptr);
// torch.nn.init.dirac_: the identity of a convolution (3-, 4- or 5-D weights), in `groups` groups
// of output channels: weight[g * out_per_group + d][d][centre...] = 1 for d < min(out_per_group, in).
Tensor& dirac_(Tensor& t, int64_t groups = 1);
// torch.nn.init.eye_: the 2-D identity (ones on the main diagonal of a possibly rectangular matrix).
Tensor& eye_(Tensor& t);

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
