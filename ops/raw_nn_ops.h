// The raw neural-network ops: 2-D convolution, pooling and batch normalization, each with its
// backward kernel. Like ops/raw_ops.h, these check devices, dtypes and shapes (and say what is wrong
// in words), allocate results and dispatch to kernels::cpu or kernels::cuda; nothing here records
// autograd history (autograd/ builds the differentiable ops on them). PyTorch is the reference for
// every default, formula and error condition; deliberate differences are noted where they occur.
//
// Inputs may be non-contiguous (they are made contiguous first); results are contiguous NCHW.
// CPU: float32 and float64. CUDA: float32, float64, float16 and bfloat16 (convolution through
// cuDNN, pooling and batch norm through Colony's kernels).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "base/int2.h"
#include "base/int3.h"
#include "kernels/common/cross_entropy.h"
#include "kernels/common/embedding_bag.h"
#include "kernels/common/grid_sample.h"
#include "kernels/common/pad.h"
#include "kernels/common/philox.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace colony::raw {

using colony::Int2;  // the (height, width) pair of base/int2.h: stride 2, padding {1, 2}
using colony::Int3;  // the (depth, height, width) triple of base/int3.h: stride 2, padding {0, 1, 1}

// ---------- convolution (ops/conv_ops.cc) ----------

// input [N, C, H, W], weight [O, C / groups, kH, kW], bias [O] or undefined -> [N, O, Ho, Wo] with
// Ho = (H + 2 * padding.h - dilation.h * (kH - 1) - 1) / stride.h + 1 (likewise Wo). Only 4-D
// (batched) input; PyTorch also takes 3-D.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), Int2 stride = 1,
              Int2 padding = 0, Int2 dilation = 1, int64_t groups = 1);

// conv2d's arguments after weight and bias, as its backward (and autograd's saved state) takes them.
struct Conv2dParams {
  Int2 stride = 1, padding = 0, dilation = 1;
  int64_t groups = 1;
};

struct Conv2dGrads {
  Tensor grad_input, grad_weight, grad_bias;  // undefined where output_mask is false
};
// Gradients of sum(grad_output * conv2d(input, weight, bias)). output_mask = {input, weight, bias}
// says which to compute: a network's first layer needs no grad_input, and skipping it saves a
// third of the layer's backward time.
Conv2dGrads conv2d_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                            const Conv2dParams& params, std::array<bool, 3> output_mask = {true, true, true});

// Transposed convolution (PyTorch's conv_transpose2d): input [N, C_in, H, W], weight [C_in, C_out /
// groups, kH, kW], bias [C_out] or undefined -> [N, C_out, Ho, Wo] with Ho = (H - 1) * stride.h -
// 2 * padding.h + dilation.h * (kH - 1) + output_padding.h + 1 (likewise Wo). It is conv2d's input
// gradient for weight (computed by the same kernels); its gradients are conv2d of grad_output (for
// the input) and conv2d_backward's weight gradient with grad_output as the input (for the weight).
// output_padding must be smaller than stride (PyTorch also takes output_padding < dilation).
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), Int2 stride = 1,
                        Int2 padding = 0, Int2 output_padding = 0, Int2 dilation = 1, int64_t groups = 1);

// ---------- 3-D convolution (ops/conv3d_ops.cc) ----------

// input [N, C, D, H, W], weight [O, C / groups, kD, kH, kW], bias [O] or undefined ->
// [N, O, Do, Ho, Wo] with Do = (D + 2 * padding.d - dilation.d * (kD - 1) - 1) / stride.d + 1
// (likewise Ho, Wo). Only 5-D (batched) input; F::conv3d takes 4-D too. Errors in torch's words
// ("Given groups=2, weight of size [...], expected input[...] to have 6 channels, but got 4
// channels instead"). A 16-bit CPU input is computed in float32 and rounded once (cpu_widen.h).
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), Int3 stride = 1,
              Int3 padding = 0, Int3 dilation = 1, int64_t groups = 1);

// conv3d's arguments after weight and bias, as its backward (and autograd's saved state) takes them.
struct Conv3dParams {
  Int3 stride = 1, padding = 0, dilation = 1;
  int64_t groups = 1;
};
// conv2d_backward's contract (Conv2dGrads, output_mask) for conv3d.
Conv2dGrads conv3d_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                            const Conv3dParams& params, std::array<bool, 3> output_mask = {true, true, true});

// Transposed 3-D convolution (torch's conv_transpose3d): input [N, C_in, D, H, W], weight [C_in,
// C_out / groups, kD, kH, kW], bias [C_out] or undefined -> [N, C_out, Do, Ho, Wo] with Do = (D - 1)
// * stride.d - 2 * padding.d + dilation.d * (kD - 1) + output_padding.d + 1 (likewise Ho, Wo):
// conv3d's input gradient, as conv_transpose2d is conv2d's. output_padding must be smaller than
// stride (torch also takes output_padding < dilation; refused here, as conv_transpose2d does).
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), Int3 stride = 1,
                        Int3 padding = 0, Int3 output_padding = 0, Int3 dilation = 1, int64_t groups = 1);

// ---------- pooling (ops/pool_ops.cc); input [N, C, H, W] or [C, H, W] ----------
// stride defaults to kernel_size. Output size (H + 2 * padding - dilation * (k - 1) - 1) / stride + 1,
// rounded up with ceil_mode (but a window must start inside the input or its left padding).
// padding is at most half the kernel size.

struct MaxPool2dResult {
  Tensor output;
  Tensor indices;  // int64, the flat index ih * W + iw of each maximum within its input plane
};
MaxPool2dResult max_pool2d(const Tensor& input, Int2 kernel_size, std::optional<Int2> stride = std::nullopt,
                           Int2 padding = 0, Int2 dilation = 1, bool ceil_mode = false);
// grad_input [input_shape] = zeros with grad_output added at each window's index.
// windows_overlap = false promises that no input element is the maximum of two windows (stride at
// least the window's extent), which lets the bfloat16 CPU kernel store each gradient instead of
// summing in float32.
Tensor max_pool2d_backward(const Tensor& grad_output, const Tensor& indices, const Shape& input_shape,
                           bool windows_overlap = true);

// Each output is its window's sum divided by divisor_override when given, else by the window's
// size counted within the padded input (count_include_pad) or within the input alone.
Tensor avg_pool2d(const Tensor& input, Int2 kernel_size, std::optional<Int2> stride = std::nullopt, Int2 padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool2d_backward(const Tensor& grad_output, const Shape& input_shape, Int2 kernel_size,
                           std::optional<Int2> stride = std::nullopt, Int2 padding = 0, bool ceil_mode = false,
                           bool count_include_pad = true, std::optional<int64_t> divisor_override = std::nullopt);

// Output (i, j) averages input rows [floor(i * H / Ho), ceil((i + 1) * H / Ho)) and the matching
// columns.
Tensor adaptive_avg_pool2d(const Tensor& input, Int2 output_size);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Shape& input_shape);
// Output (i, j) is the maximum over adaptive_avg_pool2d's window, indices as max_pool2d's (so its
// gradient is max_pool2d_backward).
MaxPool2dResult adaptive_max_pool2d(const Tensor& input, Int2 output_size);

// ---------- 3-D and fractional pooling (ops/pool3d_ops.cc); input [N, C, D, H, W] or [C, D, H, W] ----------
// torch's checks and messages (pool3d_shape_check: kernel, stride, dilation positive, padding at
// most half the effective kernel; avg_pool3d also the input at least the kernel). Results as the
// 2-D ones; indices are flat (iz * H + iy) * W + ix within each input volume (MaxPool2dResult).
MaxPool2dResult max_pool3d(const Tensor& input, Int3 kernel_size, std::optional<Int3> stride = std::nullopt,
                           Int3 padding = 0, Int3 dilation = 1, bool ceil_mode = false);
// grad_input [input_shape] = zeros with grad_output added at each index: the backward of every
// volume max pooling (max_pool3d, adaptive_max_pool3d, fractional_max_pool3d), through
// max_pool2d_backward on [..., D * H, W].
Tensor max_pool3d_backward(const Tensor& grad_output, const Tensor& indices, const Shape& input_shape);
Tensor avg_pool3d(const Tensor& input, Int3 kernel_size, std::optional<Int3> stride = std::nullopt, Int3 padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool3d_backward(const Tensor& grad_output, const Shape& input_shape, Int3 kernel_size,
                           std::optional<Int3> stride = std::nullopt, Int3 padding = 0, bool ceil_mode = false,
                           bool count_include_pad = true, std::optional<int64_t> divisor_override = std::nullopt);
Tensor adaptive_avg_pool3d(const Tensor& input, Int3 output_size);
Tensor adaptive_avg_pool3d_backward(const Tensor& grad_output, const Shape& input_shape);
MaxPool2dResult adaptive_max_pool3d(const Tensor& input, Int3 output_size);
// Fractional max pooling (torch._C._nn.fractional_max_pool2d/3d): kernel_size-wide windows at the
// pseudo-random starts random_samples ([>= N, C, 2] or [.., 3], input's dtype, in [0, 1)) give
// (kernels/common/pool_window.h). Input [N, C, H, W] / [C, H, W], or the 3-D ranks. Gradients:
// max_pool2d_backward / max_pool3d_backward.
MaxPool2dResult fractional_max_pool2d(const Tensor& input, Int2 kernel_size, Int2 output_size,
                                      const Tensor& random_samples);
MaxPool2dResult fractional_max_pool3d(const Tensor& input, Int3 kernel_size, Int3 output_size,
                                      const Tensor& random_samples);

// ---------- batch normalization (ops/batch_norm_ops.cc); input [N, C, ...] ----------

struct BatchNormResult {
  Tensor output;
  // [C], float32 for float16/bfloat16 inputs (as PyTorch), else the input's dtype.
  // Training: the batch mean and 1 / sqrt(biased var + eps). Evaluation: the same two
  // computed from the running statistics (PyTorch returns empty tensors there); either way they
  // are what batch_norm_backward needs.
  Tensor save_mean, save_invstd;
};
// weight, bias [C] or undefined (1 and 0), in the input's dtype or, beside a float16/bfloat16
// input on CUDA, all in float32 (mixed precision, as PyTorch; their gradients then are float32
// too). running_mean / running_var [C] (same dtype as weight) or undefined: in
// training they are updated in place, running = (1 - momentum) * running + momentum * batch stat,
// with the unbiased batch variance; in evaluation they are required and used.
BatchNormResult batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                           const Tensor& running_var, bool training, double momentum = 0.1, double eps = 1e-5);

struct BatchNormGrads {
  Tensor grad_input, grad_weight, grad_bias;  // undefined where output_mask is false
};
// training must match the forward call: with it the gradient flows through the batch statistics.
BatchNormGrads batch_norm_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                   const Tensor& save_mean, const Tensor& save_invstd, bool training,
                                   std::array<bool, 3> output_mask = {true, true, true});

// ---------- layer and RMS normalization (ops/norm_ops.cc) ----------
// Over the trailing dims of input that match normalized_shape (PyTorch's layer_norm / rms_norm),
// one fused kernel each way (kernels/common/norm.h). float32, float64, float16 and bfloat16 on both
// devices, the 16-bit ones accumulating in float32.

struct NormResult {
  Tensor output;  // input's shape and dtype
  // Per row ([rows], rows = numel / prod(normalized_shape)), in the compute dtype (float32 for the
  // 16-bit inputs): the mean (undefined for rms_norm) and 1 / sqrt(var + eps) (or of mean(x^2) + eps).
  Tensor mean, rstd;
};
// weight and bias of shape normalized_shape, or undefined (1 and 0); in the input's dtype or, beside
// a float16/bfloat16 input, float32 (mixed precision: their gradients are float32 too).
NormResult layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                      double eps = 1e-5);
NormResult rms_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, double eps);

struct NormGrads {
  Tensor grad_input;
  // Of shape normalized_shape, in the compute dtype (float32 for 16-bit inputs): the caller casts
  // them to its parameters' dtype. grad_bias = sum of grad_output over rows, grad_weight = sum of
  // grad_output * normalized input.
  Tensor grad_weight, grad_bias;  // each undefined where output_mask is false
};
// From the forward's mean and rstd; weight as in the forward (undefined: 1). output_mask = {input,
// weight, bias}.
NormGrads layer_norm_backward(const Tensor& grad_output, const Tensor& input, const Shape& normalized_shape,
                              const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                              std::array<bool, 3> output_mask = {true, true, true});
// output_mask = {input, weight}.
NormGrads rms_norm_backward(const Tensor& grad_output, const Tensor& input, const Shape& normalized_shape,
                            const Tensor& rstd, const Tensor& weight, std::array<bool, 2> output_mask = {true, true});

// ---------- fused cross-entropy and nll_loss (ops/loss_ops.cc); input [N, C] ----------

using kernels::LossReduction;

struct CrossEntropyOptions {
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;  // in [0, 1]; 0 for log_probs
  LossReduction reduction = LossReduction::Mean;
  bool log_probs = false;        // input holds log-probabilities: nll_loss
};

struct CrossEntropyResult {
  Tensor loss;  // input's dtype: [N] for None, 0-d for Mean and Sum
  // What cross_entropy_loss_backward needs, in the compute dtype (float32 for 16-bit inputs): each
  // row's log-sum-exp as its two terms [N, 2], the max and log(sum(exp(x - max))) (undefined for
  // log_probs; kernels/common/cross_entropy.h says why they are kept apart), and the number of
  // counted targets [1].
  Tensor lse, counted;
};
// One kernel per direction: log-softmax, the target's negative log-likelihood, label smoothing,
// ignore_index and the reduction fused (PyTorch's definitions). input [N, C] floating point, target
// [N] int64 on the same device. A target outside [0, C) (other than ignore_index) is an error
// naming the op: thrown here on the CPU, reported at the next synchronization on CUDA.
CrossEntropyResult cross_entropy_loss(const Tensor& input, const Tensor& target, const CrossEntropyOptions& options);
// The gradient with respect to input, from the forward's lse and counted.
Tensor cross_entropy_loss_backward(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                                   const Tensor& lse, const Tensor& counted, const CrossEntropyOptions& options);


// ---------- fused scaled-dot-product attention (ops/attention_ops.cc) ----------
// torch.nn.functional.scaled_dot_product_attention: q [..., L, E], k [..., S, E], v [..., S, Ev],
// leading dims broadcast together; attn_mask bool (true takes part) or floating (added to the
// scores), broadcastable to [..., L, S]; is_causal masks key j for query i when j > i (not with a
// mask); scale defaults to 1 / sqrt(E). One kernel each way (kernels/common/attention.h).
struct AttentionResult {
  Tensor output;  // [..., L, Ev], q's dtype
  Tensor lse;     // [batch * heads, L], float32 (float64 for float64): log-sum-exp of each row's scores
  kernels::PhiloxArgs philox;  // the dropout's draw, for backward
  double scale = 1.0;          // the scale used
};
AttentionResult scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const Tensor& attn_mask = Tensor(), double dropout_p = 0.0,
                                             bool is_causal = false, std::optional<double> scale = std::nullopt,
                                             Generator* gen = nullptr);
struct AttentionGrads {
  Tensor grad_q, grad_k, grad_v;  // shaped as q, k, v
};
// From the forward's inputs and result (output, lse, philox, scale), with the same mask and flags.
AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_output, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const Tensor& attn_mask,
                                                     const AttentionResult& forward, double dropout_p,
                                                     bool is_causal);

// ---------- fused LSTM and GRU cells (ops/rnn_cell_ops.cc) ----------
// One recurrent step's gate math after its two products, one kernel each way
// (kernels/common/rnn_cell.h). xg, hg: the input's and the hidden state's gate pre-activations,
// [N, G*H] (or [G*H] unbatched), one floating dtype and device, gates in torch's order (LSTM i,
// f, g, o; GRU r, z, n). The cell state c, its gradient and `saved` are float32 for 16-bit xg,
// else xg's dtype (rnn_cell_state_dtype). Results are contiguous.
DType rnn_cell_state_dtype(DType dtype);
struct LstmCellResult {
  Tensor h;      // [N, H], xg's dtype: o tanh(c')
  Tensor c;      // [N, H]: f c + i g
  Tensor saved;  // [N, 5H]: i, f, g, o, tanh(c'); undefined unless asked for
};
LstmCellResult lstm_cell(const Tensor& xg, const Tensor& hg, const Tensor& c, bool save);
struct LstmCellGrads {
  Tensor gates;  // [N, 4H], xg's dtype: the gradient of xg and of hg
  Tensor c;      // [N, H]: of the old c
};
// dtype: xg's (grad_h's). grad_h or grad_c may be undefined (no gradient reached that output).
LstmCellGrads lstm_cell_backward(const Tensor& grad_h, const Tensor& grad_c, const Tensor& c, const Tensor& saved,
                                 DType dtype);

// h [N, H] in xg's dtype. Returns h' = (h - n) z + n and, with save, saved [N, 4H]: r, z, n, hg's n part.
std::tuple<Tensor, Tensor> gru_cell(const Tensor& xg, const Tensor& hg, const Tensor& h, bool save);
struct GruCellGrads {
  Tensor xg, hg, h;
};
GruCellGrads gru_cell_backward(const Tensor& grad_h_next, const Tensor& h, const Tensor& saved);

// ---------- sliding blocks (ops/fold_ops.cc) ----------

// torch's im2col (F::unfold): input [N, C, H, W] or unbatched [C, H, W] (floating) -> [N, C * kH *
// kW, L] or [C * kH * kW, L], L = the blocks along H times along W, each (H + 2 * padding.h -
// dilation.h * (kH - 1) - 1) / stride.h + 1 (>= 1); row (c, i, j), column (by, bx) holds input[c,
// by * stride.h - padding.h + i * dilation.h, bx * stride.w - padding.w + j * dilation.w], zero
// outside. torch's checks and messages.
Tensor im2col(const Tensor& input, Int2 kernel_size, Int2 dilation, Int2 padding, Int2 stride);
// torch's col2im (F::fold), im2col's adjoint: input [N, C * kH * kW, L] or [C * kH * kW, L] ->
// [N, C, output_size.h, output_size.w] (or unbatched), each element the sum of the column elements
// im2col would have copied from it. L must be the block count of output_size.
Tensor col2im(const Tensor& input, Int2 output_size, Int2 kernel_size, Int2 dilation, Int2 padding, Int2 stride);

// ---------- padding by reflection, replication, wrapping (ops/pad_ops.cc) ----------

// F::pad's "reflect", "replicate" and "circular" modes (kernels/common/pad.h) over the last
// pad.size() / 2 dims (1 to 3) of any dtype: pad as torch's, (lo, hi) of the last dim first, a
// negative amount cropping. F::pad gives torch's checks and words first; these repeat the ones the
// kernels' memory safety rests on (a reflection narrower than the dim, a wrap at most once round
// what cropping leaves, a non-empty output).
Tensor pad_by_mode(const Tensor& input, kernels::PadMode mode, const std::vector<int64_t>& pad);
// Its gradient: grad_output of pad_by_mode's output shape -> the input's shape `input_sizes`, each
// element the sum of the output elements that read it (floating dtypes).
Tensor pad_by_mode_backward(const Tensor& grad_output, kernels::PadMode mode, const std::vector<int64_t>& pad,
                            const Shape& input_sizes);

// ---------- CTC loss (ops/ctc_loss_ops.cc) ----------

struct CtcLossResult {
  Tensor nll;        // [N], log_probs' dtype: each sample's negative log-likelihood (inf: no alignment)
  Tensor log_alpha;  // [N, T, 2 * max(target_lengths) + 1]: the forward variables the backward reads
  // The forward's inputs as its kernels read them, for the backward: the targets as int64 on
  // log_probs' device, and the int64 [3, N] input lengths, target lengths and each sample's first
  // label within targets, on the device too.
  Tensor targets, lengths;
  int64_t blank = 0, max_target = 0;
};
// torch's _ctc_loss (kernels/common/ctc_loss.h has the recurrences): log_probs [T, N, C] float32 or
// float64; targets [N, S] padded (S >= every target length) or 1-D, the targets concatenated
// (sum(target_lengths) labels), of any integral (or floating, converted as torch converts them)
// dtype, on any device; N input and target lengths. torch's checks and messages (lengths within
// [0, T] and >= 0, sizes, blank within [0, C)); besides, a label outside [0, C) is an error (torch
// reads out of bounds there): thrown here for host targets, reported at the next synchronization
// for CUDA ones.
CtcLossResult ctc_loss(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                       const std::vector<int64_t>& target_lengths, int64_t blank);
// The gradient with respect to log_probs [T, N, C] of sum_b grad_nll[b] * nll[b] (grad_nll [N]);
// zero_infinity zeroes the samples whose nll is inf (NaN otherwise, as torch's).
Tensor ctc_loss_backward(const Tensor& grad_nll, const Tensor& log_probs, const CtcLossResult& forward,
                         bool zero_infinity);

// ---------- embedding bags (ops/embedding_bag_ops.cc) ----------

using kernels::EmbeddingBagMode;

struct EmbeddingBagResult {
  Tensor output;       // [bags, dim], weight's dtype
  Tensor max_indices;  // int64 [bags, dim] for Max (the row of each maximum, -1 for an empty bag)
  Tensor bag_size;     // int64 [bags]: the indices each bag counts (padding_idx left out)
};
// The fused bags of kernels/common/embedding_bag.h: weight [num_embeddings, dim] floating; indices
// 1-D int64 on weight's device; offsets int64 [bags + 1] on weight's device, ascending from 0, the
// last at most indices' length (F::embedding_bag checks and builds it from torch's forms);
// per_sample_weights [indices] of weight's dtype (Sum only) or undefined; padding_idx in [0,
// num_embeddings) or -1. An index outside [0, num_embeddings) is an error with torch's message:
// thrown here for host indices, reported at the next synchronization on CUDA.
EmbeddingBagResult embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                                 const Tensor& per_sample_weights, EmbeddingBagMode mode, int64_t padding_idx);
// The gradient of weight [num_embeddings, dim] from grad_output [bags, dim] (deterministic on the CPU).
Tensor embedding_bag_backward(const Tensor& grad_output, const Tensor& indices, const Tensor& offsets,
                              const Tensor& per_sample_weights, const EmbeddingBagResult& forward,
                              int64_t num_embeddings, EmbeddingBagMode mode, int64_t padding_idx);
// The gradient of per_sample_weights [indices] (Sum): each position's bag gradient dotted with its row.
Tensor embedding_bag_per_sample_weights_backward(const Tensor& grad_output, const Tensor& weight, const Tensor& indices,
                                                 const Tensor& offsets, int64_t padding_idx);

// ---------- grid sampling (ops/grid_sample_ops.cc) ----------

// torch's grid_sampler: input [N, C, H, W] with grid [N, Ho, Wo, 2], or [N, C, D, H, W] with grid
// [N, Do, Ho, Wo, 3] (bicubic is tricubic there), the same floating dtype -> [N, C, Ho, Wo] (or [N, C, Do,
// Ho, Wo]), each output point the input interpolated at its grid entry (kernels/common/grid_sample.h).
// torch's checks and messages.
Tensor grid_sampler(const Tensor& input, const Tensor& grid, kernels::GridSampleMode mode,
                    kernels::GridSamplePadding padding, bool align_corners);
// Its gradients given grad_output (the output's shape): (grad_input, grad_grid), each undefined when
// not asked for. The nearest mode's grid gradient is zero, as torch's.
std::tuple<Tensor, Tensor> grid_sampler_backward(const Tensor& grad_output, const Tensor& input, const Tensor& grid,
                                                 kernels::GridSampleMode mode, kernels::GridSamplePadding padding,
                                                 bool align_corners, bool input_grad, bool grid_grad);

}  // namespace colony::raw
