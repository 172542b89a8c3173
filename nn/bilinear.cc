#include "nn/bilinear.h"

#include <cmath>
#include <stdexcept>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "nn/init.h"
#include "nn/repr.h"
#include "ops/raw_ops.h"

namespace colony::nn {
namespace functional {
namespace {

// The product, for operands of one dtype.
Tensor bilinear_product(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias) {
  const int64_t in1 = input1.size(-1), in2 = input2.size(-1), out = weight.size(0);
  Shape batch(input1.sizes().begin(), input1.sizes().end() - 1);
  int64_t batch_rows = 1;
  for (int64_t s : batch) batch_rows *= s;
  Tensor x1 = colony::reshape(input1, {batch_rows, in1});
  Tensor x2 = colony::reshape(input2, {batch_rows, 1, in2});
  // x1 W: [B, in1] x [in1, out * in2] -> [B, out, in2]; then against x2 summed over in2.
  Tensor w = colony::reshape(colony::permute(weight, {1, 0, 2}), {in1, out * in2});
  Tensor y = colony::sum(colony::mul(colony::reshape(colony::matmul(x1, w), {batch_rows, out, in2}), x2), {-1});
  if (bias.defined()) y = colony::add(y, bias);
  Shape out_shape = batch;
  out_shape.push_back(out);
  return colony::reshape(y, out_shape);
}

}  // namespace

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias) {
  // torch's checks (ATen's bilinear), in its order and words.
  if (input1.dim() != input2.dim()) {
    throw std::invalid_argument("bilinear(): input dimensions do not match: got " + std::to_string(input1.dim()) +
                                " and " + std::to_string(input2.dim()));
  }
  if (input1.dim() == 0) throw std::invalid_argument("bilinear(): inputs must have at least one dimension, got 0-D");
  for (int64_t d = 0; d + 1 < input1.dim(); ++d) {
    if (input1.size(d) != input2.size(d)) {
      throw std::invalid_argument("bilinear(): input batch dimensions do not match at dim " + std::to_string(d) +
                                  ": got " + std::to_string(input1.size(d)) + " and " + std::to_string(input2.size(d)));
    }
  }
  if (weight.dim() != 3) {
    throw std::invalid_argument("bilinear(): expected a 3-D weight [out_features, in1_features, in2_features], got " +
                                std::to_string(weight.dim()) + "-D");
  }
  const int64_t in1 = input1.size(-1), in2 = input2.size(-1), out = weight.size(0);
  if (in1 != weight.size(1)) {
    throw std::invalid_argument("bilinear(): input1 size does not match weight size: got " + std::to_string(in1) +
                                " but expected " + std::to_string(weight.size(1)));
  }
  if (in2 != weight.size(2)) {
    throw std::invalid_argument("bilinear(): input2 size does not match weight size: got " + std::to_string(in2) +
                                " but expected " + std::to_string(weight.size(2)));
  }
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != out)) {
    throw std::invalid_argument("bilinear(): bias size does not match weight size: got " +
                                std::to_string(bias.numel()) + " but expected " + std::to_string(out));
  }
  // torch's CUDA autocast lists bilinear under "promote": every operand in the widest of their
  // dtypes, and the product below not lowered (matmul's row would lower it). Without autocast the
  // same promotion (torch refuses mixed dtypes there).
  DType dtype = promote_types(promote_types(input1.dtype(), input2.dtype()), weight.dtype());
  if (bias.defined()) dtype = promote_types(dtype, bias.dtype());
  AutocastGuard no_lowering(input1.device().type, /*enabled=*/false);
  auto as = [dtype](const Tensor& t) { return t.dtype() == dtype ? t : colony::to(t, t.device(), dtype); };
  return bilinear_product(as(input1), as(input2), as(weight), bias.defined() ? as(bias) : bias);
}

}  // namespace functional

Bilinear::Bilinear(const BilinearOptions& o) : options(o) {
  weight = register_parameter("weight", raw::empty({o.out_features(), o.in1_features(), o.in2_features()}));
  if (o.bias()) bias = register_parameter("bias", raw::empty({o.out_features()}));
  reset_parameters();
}

void Bilinear::reset_parameters() {
  // torch's Bilinear.reset_parameters: bound = 1 / sqrt(weight.size(1)) for both.
  const double bound = 1.0 / std::sqrt(static_cast<double>(options.in1_features()));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

Tensor Bilinear::forward(const Tensor& input1, const Tensor& input2) {
  return functional::bilinear(input1, input2, weight, bias);
}

std::string Bilinear::extra_repr() const {
  return "in1_features=" + std::to_string(options.in1_features()) + ", in2_features=" +
         std::to_string(options.in2_features()) + ", out_features=" + std::to_string(options.out_features()) +
         ", bias=" + repr::py_bool(options.bias());
}

}  // namespace colony::nn
