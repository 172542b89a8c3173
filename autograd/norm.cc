// layer_norm, rms_norm and embedding: the raw ops of ops/raw_nn_ops.h and ops/raw_ops.h with
// their backward nodes. The norms' fused backward kernels are differentiated twice through their
// composites (autograd/composite_backward.h); embedding's gradient is an index_add of g.
#include <limits>
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/composite_backward.h"
#include "autograd/nn_ops.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"
#include "ops/raw_nn_ops.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::record_differentiable;
using autograd::detail::record_fused;

namespace {

// The last `n` dims of a tensor of `rank` dims: the dims a norm over normalized_shape reduces.
std::vector<int64_t> last_dims(int64_t rank, size_t n) {
  std::vector<int64_t> dims;
  for (int64_t d = rank - static_cast<int64_t>(n); d < rank; ++d) dims.push_back(d);
  return dims;
}

// The norms as their definitions, for a backward with create_graph: (x - E[x]) / sqrt(Var[x] + eps)
// with the biased variance, and x / sqrt(E[x^2] + eps); then the affine.
Tensor layer_norm_composite(const Tensor& x, size_t normalized_dims, const Tensor& weight, const Tensor& bias,
                            double eps) {
  const std::vector<int64_t> dims = last_dims(x.dim(), normalized_dims);
  const Tensor centered = sub(x, mean(x, dims, /*keepdim=*/true));
  Tensor y = mul(centered, rsqrt(add(mean(square(centered), dims, /*keepdim=*/true), eps)));
  if (weight.defined()) y = mul(y, weight);
  if (bias.defined()) y = add(y, bias);
  return y;
}

Tensor rms_norm_composite(const Tensor& x, size_t normalized_dims, const Tensor& weight, double eps) {
  const std::vector<int64_t> dims = last_dims(x.dim(), normalized_dims);
  Tensor y = mul(x, rsqrt(add(mean(square(x), dims, /*keepdim=*/true), eps)));
  return weight.defined() ? mul(y, weight) : y;
}

// rms_norm's default eps: the machine epsilon of the type the op accumulates in, float32 for the
// 16-bit inputs (torch 2.15's rms_norm gives a bfloat16 row of 1e-4 the value 1e-4 / sqrt(1e-8 +
// 1.19e-7), not bfloat16's epsilon 2^-7: tests/nn/normalization_test.cc holds its outputs).
double default_rms_eps(DType dtype) {
  return dtype == kFloat64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
}

}  // namespace

Tensor layer_norm(const Tensor& input_arg, const Shape& normalized_shape, const Tensor& weight_arg,
                  const Tensor& bias_arg, double eps) {
  // Under autocast all three are widened to float32 and the output stays float32 (PyTorch's CUDA
  // list puts layer_norm among the float32 ops).
  const Tensor input = autocast::cast(autocast::Op::layer_norm, input_arg);
  const Tensor weight = autocast::cast(autocast::Op::layer_norm, weight_arg);
  const Tensor bias = autocast::cast(autocast::Op::layer_norm, bias_arg);
  raw::NormResult r = raw::layer_norm(input, normalized_shape, weight, bias, eps);
  if (!autograd::needs_grad(input, weight, bias)) return r.output;
  // Gradients are returned for the defined inputs, in this order.
  std::vector<Tensor> inputs = {input};
  if (weight.defined()) inputs.push_back(weight);
  if (bias.defined()) inputs.push_back(bias);
  SavedTensor si(input), sw = weight.defined() ? SavedTensor(weight) : SavedTensor();
  const bool has_w = weight.defined(), has_b = bias.defined();
  const DType wd = has_w ? weight.dtype() : input.dtype(), bd = has_b ? bias.dtype() : input.dtype();
  Tensor mean = r.mean, rstd = r.rstd;
  const size_t normalized_dims = normalized_shape.size();
  auto composite = [has_w, has_b, normalized_dims, eps](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    return {layer_norm_composite(in[0], normalized_dims, has_w ? in[1] : Tensor(), has_b ? in.back() : Tensor(), eps)};
  };
  record_fused("NativeLayerNormBackward", inputs, r.output, {si, sw},
         [si, sw, mean, rstd, normalized_shape, has_w, has_b, wd, bd](const Grads& g, const Needs& needs) -> Grads {
           const size_t iw = 1, ib = has_w ? 2 : 1;
           raw::NormGrads gr =
               raw::layer_norm_backward(g[0], si.unpack(), normalized_shape, mean, rstd, has_w ? sw.unpack() : Tensor(),
                                        {needs[0], has_w && needs[iw], has_b && needs[ib]});
           // The parameter gradients come in the compute dtype; each goes back to its parameter's.
           Grads out = {gr.grad_input};
           if (has_w) out.push_back(gr.grad_weight.defined() ? raw::to(gr.grad_weight, gr.grad_weight.device(), wd) : Tensor());
           if (has_b) out.push_back(gr.grad_bias.defined() ? raw::to(gr.grad_bias, gr.grad_bias.device(), bd) : Tensor());
           return out;
         },
         composite);
  return r.output;
}

Tensor rms_norm(const Tensor& input_arg, const Shape& normalized_shape, const Tensor& weight_arg,
                std::optional<double> eps) {
  const Tensor input = autocast::cast(autocast::Op::rms_norm, input_arg);
  const Tensor weight = autocast::cast(autocast::Op::rms_norm, weight_arg);
  const double e = eps ? *eps : default_rms_eps(input.defined() ? input.dtype() : kFloat32);
  raw::NormResult r = raw::rms_norm(input, normalized_shape, weight, e);
  if (!autograd::needs_grad(input, weight)) return r.output;
  std::vector<Tensor> inputs = {input};
  if (weight.defined()) inputs.push_back(weight);
  SavedTensor si(input), sw = weight.defined() ? SavedTensor(weight) : SavedTensor();
  const bool has_w = weight.defined();
  const DType wd = has_w ? weight.dtype() : input.dtype();
  Tensor rstd = r.rstd;
  const size_t normalized_dims = normalized_shape.size();
  auto composite = [has_w, normalized_dims, e](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    return {rms_norm_composite(in[0], normalized_dims, has_w ? in[1] : Tensor(), e)};
  };
  record_fused("RmsNormBackward", inputs, r.output, {si, sw},
         [si, sw, rstd, normalized_shape, has_w, wd](const Grads& g, const Needs& needs) -> Grads {
           raw::NormGrads gr = raw::rms_norm_backward(g[0], si.unpack(), normalized_shape, rstd,
                                                      has_w ? sw.unpack() : Tensor(), {needs[0], has_w && needs[1]});
           if (has_w) {
             Tensor gw = gr.grad_weight.defined() ? raw::to(gr.grad_weight, gr.grad_weight.device(), wd) : Tensor();
             return {gr.grad_input, gw};
           }
           return {gr.grad_input};
         },
         composite);
  return r.output;
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx) {
  const char* op = "embedding";
  if (!input.defined() || !weight.defined()) {
    throw std::invalid_argument("embedding: expected defined input (indices) and weight tensors");
  }
  if (input.dtype() != kInt64 && input.dtype() != kInt32) {
    throw std::invalid_argument(std::string(op) + ": expected int64 or int32 indices, got " +
                                dtype_name(input.dtype()));
  }
  if (weight.dim() != 2) {
    throw std::invalid_argument(std::string(op) + ": expected weight of shape [num_embeddings, embedding_dim], got " +
                                shape_str(weight.sizes()));
  }
  if (input.device() != weight.device()) {
    throw std::invalid_argument(std::string(op) + ": indices are on " + input.device().str() + " but weight is on " +
                                weight.device().str());
  }
  const int64_t num = weight.size(0), dim = weight.size(1);
  std::optional<int64_t> pad = padding_idx;
  if (pad) {
    if (*pad < -num || *pad >= num) {
      throw std::invalid_argument(std::string(op) + ": padding_idx " + std::to_string(*pad) +
                                  " must be within [-" + std::to_string(num) + ", " + std::to_string(num) +
                                  ") (num_embeddings " + std::to_string(num) + ")");
    }
    if (*pad < 0) *pad += num;
  }
  const Tensor idx = raw::contiguous(raw::to(raw::reshape(input, {input.numel()}), input.device(), kInt64));
  // On the CPU the values are checked here, for a message that says which index and which range;
  // CUDA checks them in the kernel (reported at the next synchronization).
  if (idx.is_cpu() && idx.numel() > 0) {
    const int64_t* p = idx.data_ptr<int64_t>();
    for (int64_t i = 0; i < idx.numel(); ++i) {
      if (p[i] < 0 || p[i] >= num) {
        throw std::out_of_range(std::string(op) + ": index " + std::to_string(p[i]) + " (at flat position " +
                                std::to_string(i) + " of indices " + shape_str(input.sizes()) +
                                ") is out of range: expected 0 <= index < num_embeddings = " + std::to_string(num));
      }
    }
  }
  Shape out_shape = input.sizes();
  out_shape.push_back(dim);
  Tensor out = raw::reshape(raw::index_select(weight, 0, idx), out_shape);
  if (!autograd::needs_grad(weight)) return out;
  record_differentiable("EmbeddingBackward", {weight}, out, {}, [idx, num, dim, pad](const Grads& g, const Needs&) -> Grads {
    // index_add sums the rows of one index in index order on the CPU (kernels/cpu/index.h), so the
    // result is the same for every run and thread count.
    if (GradMode::is_enabled()) {
      // create_graph: the same sum, differentiable in g (its gradient is g's rows picked again);
      // the padding row is zeroed by a product rather than written.
      Tensor dw = index_add({num, dim}, 0, idx, reshape(g[0], {idx.numel(), dim}));
      if (!pad) return {dw};
      Tensor keep = raw::ones({num, 1}, TensorOptions(dw.dtype()).device(dw.device()));
      Tensor pad_row = raw::select(keep, 0, *pad);
      raw::fill_(pad_row, 0.0);
      return {mul(dw, keep)};
    }
    Tensor rows = raw::reshape(raw::contiguous(g[0]), {idx.numel(), dim});
    Tensor dw = raw::index_add({num, dim}, 0, idx, rows);
    if (pad) {
      Tensor row = raw::select(dw, 0, *pad);
      raw::fill_(row, 0.0);
    }
    return {dw};
  });
  return out;
}

}  // namespace colony
