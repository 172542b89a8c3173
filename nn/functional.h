// nn::functional (used as F:: in user code): the stateless layer math. Everything here is
// differentiable; the layers in this folder are thin modules over these functions.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/arg.h"
#include "base/int2.h"
#include "base/int3.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace colony::nn::functional {

// How a loss reduces its per-element values (PyTorch's reduction="mean" / "sum" / "none";
// BatchMean is kl_div's "batchmean").
enum class Reduction { Mean, Sum, None, BatchMean };

// y = x W^T + b; x [..., in], weight [out, in], bias [out] (optional).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());
Tensor relu(const Tensor& input);
Tensor sigmoid(const Tensor& input);
Tensor tanh(const Tensor& input);
// Zeroes each element with probability p and scales the rest by 1/(1-p) while training; the
// identity otherwise.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true, Generator* gen = nullptr);
struct DropoutFuncOptions {
  COLONY_ARG(double, p) = 0.5;
  COLONY_ARG(bool, training) = true;
  // Writes the result into `input` (a differentiable in-place op, so allowed inside the graph).
  COLONY_ARG(bool, inplace) = false;
};
Tensor dropout(const Tensor& input, const DropoutFuncOptions& options);
// F::dropout1d / dropout2d / dropout3d: whole channels zeroed with probability p (one draw per
// (n, c) of [N, C, *] or per c of unbatched [C, *]; 1d takes [N, C, L] or [C, L], 2d [N, C, H, W]
// or [C, H, W], 3d [N, C, D, H, W] or [C, D, H, W]), the rest scaled by 1 / (1 - p), in training.
// dropout2d takes a 3-D input as [N, C, L] (1-D channel dropout) and logs torch's warning, as torch.
Tensor dropout1d(const Tensor& input, const DropoutFuncOptions& options = {}, Generator* gen = nullptr);
Tensor dropout2d(const Tensor& input, const DropoutFuncOptions& options = {}, Generator* gen = nullptr);
Tensor dropout3d(const Tensor& input, const DropoutFuncOptions& options = {}, Generator* gen = nullptr);
// F::alpha_dropout (SELU's dropout: dropped elements take SELU's negative saturation value and an
// affine correction keeps mean 0 and variance 1) and feature_alpha_dropout (the same per channel of
// [N, C, *]). Their training flag defaults to false, as torch's functions.
struct AlphaDropoutFuncOptions {
  AlphaDropoutFuncOptions(double p = 0.5) : p_(p) {}  // NOLINT
  COLONY_ARG(double, p);
  COLONY_ARG(bool, training) = false;
  COLONY_ARG(bool, inplace) = false;
};
using FeatureAlphaDropoutFuncOptions = AlphaDropoutFuncOptions;
Tensor alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& options = {}, Generator* gen = nullptr);
Tensor feature_alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& options = {}, Generator* gen = nullptr);
// F::gumbel_softmax: softmax((logits + g) / tau) with g Gumbel(0, 1) noise; hard: the one-hot of the
// argmax in the forward with the soft sample's gradient (straight-through), as torch.
struct GumbelSoftmaxFuncOptions {
  COLONY_ARG(double, tau) = 1.0;
  COLONY_ARG(bool, hard) = false;
  COLONY_ARG(int64_t, dim) = -1;
};
Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options = {}, Generator* gen = nullptr);
// F::relu(x, ReLUFuncOptions().inplace(true)) as F.relu(x, inplace=True).
struct ReLUFuncOptions {
  ReLUFuncOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  COLONY_ARG(bool, inplace);
};
Tensor relu(const Tensor& input, const ReLUFuncOptions& options);
Tensor softmax(const Tensor& input, int64_t dim);
Tensor log_softmax(const Tensor& input, int64_t dim);
Tensor flatten(const Tensor& input, int64_t start_dim = 1, int64_t end_dim = -1);
// F.scaled_dot_product_attention: softmax(q k^T * scale + mask) v, one fused kernel each way
// (colony::scaled_dot_product_attention has the shapes and rules). attn_mask bool (true takes
// part) or floating (added); is_causal masks key j for query i when j > i; scale defaults to
// 1 / sqrt(E); dropout_p applies whenever it is > 0 (pass 0 in eval, as in PyTorch); enable_gqa:
// key and value heads (dim -3) that divide the query's serve groups of query heads.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt, bool enable_gqa = false,
                                    Generator* gen = nullptr);
// enable_gqa took the place of a Generator* as the eighth argument: such a call is refused rather
// than read as enable_gqa = true.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, Generator* gen) = delete;

// F::pad (torch.nn.functional.pad): `pad` holds (before, after) pairs for the last dims, the last
// dim first: {1, 2} pads the last dim by 1 before and 2 after, {1, 2, 3, 4} also dim -2 by 3 and 4.
// A negative amount removes elements, in every mode. "constant" fills with value, any number of
// dims; "reflect" (mirrored without repeating the edge; each pad < the dim's size), "replicate"
// (the edge repeated) and "circular" (wrapped; each pad <= the dim's size) pad 1 to 3 last dims of
// an input with one or two more dims than that (PyTorch's rule: [C, W] or [N, C, W] for 1-D
// padding), every dim but the batch non-empty for reflect and replicate, as torch. A circular pad
// wraps within what its dim's negative side leaves (torch's order: crop, then wrap); where a
// positive pad is longer than that remainder torch reads memory it never wrote, and Colony refuses.
// Differentiable: the padding gets no gradient, a repeated element gets the sum of its copies'.
// Composed of index_select / cat per padded dim (nn/functional_pad.cc), so both devices come with it.
struct PadFuncOptions {
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}                   // NOLINT
  PadFuncOptions(std::initializer_list<int64_t> pad) : pad_(pad) {}  // NOLINT: F::pad(x, {1, 1})
  COLONY_ARG(std::vector<int64_t>, pad);
  COLONY_ARG(std::string, mode) = "constant";  // "constant", "reflect", "replicate" or "circular"
  COLONY_ARG(double, value) = 0.0;             // what "constant" fills with
};
Tensor pad(const Tensor& input, const PadFuncOptions& options);

// F::normalize: input / max(||input||_p over dim, eps), the norm kept as a dim of size 1 and
// broadcast back (Tensor::norm's p: 2, 1, any p > 0, inf).
struct NormalizeFuncOptions {
  COLONY_ARG(double, p) = 2.0;
  COLONY_ARG(int64_t, dim) = 1;
  COLONY_ARG(double, eps) = 1e-12;
};
Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options = {});

// F::interpolate (torch.nn.functional.interpolate) over [N, C, d1, ..., dK] inputs, K = 1 to 3:
// exactly one of size and scale_factor (one value for every spatial dim, or one per dim). Modes:
// "nearest" (torch's legacy floor index), "nearest-exact", "linear" (3-D input), "bilinear" and
// "bicubic" (4-D), "trilinear" (5-D) and "area" (adaptive average pooling). align_corners (default
// false) only for the interpolating modes; antialias only for bilinear and bicubic (as torch and
// Pillow: a wider filter when downsampling). With scale_factor, the output size is
// floor(size * scale) and the interpolation uses 1 / scale unless recompute_scale_factor is true,
// as torch. Nearest modes take any dtype; the others floating point (float16 and bfloat16 computed
// in float32). Differentiable; float32 under autocast, as torch's policy.
struct InterpolateFuncOptions {
  COLONY_ARG(std::optional<std::vector<int64_t>>, size);
  COLONY_ARG(std::optional<std::vector<double>>, scale_factor);
  COLONY_ARG(std::string, mode) = "nearest";
  COLONY_ARG(std::optional<bool>, align_corners);
  COLONY_ARG(std::optional<bool>, recompute_scale_factor);
  COLONY_ARG(bool, antialias) = false;

 public:
  // size({4, 6}) and scale_factor({2.0}) as a user writes them; one number for every spatial dim.
  auto& size(std::vector<int64_t> v) { return size(std::optional<std::vector<int64_t>>(std::move(v))); }
  auto& size(int64_t v) { return size(std::vector<int64_t>{v}); }
  auto& scale_factor(std::vector<double> v) { return scale_factor(std::optional<std::vector<double>>(std::move(v))); }
  auto& scale_factor(double v) { return scale_factor(std::vector<double>{v}); }
};
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options);

// F::pixel_shuffle: [*, C * r^2, H, W] -> [*, C, H * r, W * r] (sub-pixel convolution's rearrangement);
// F::pixel_unshuffle is its inverse. Views and one copy, differentiable, any dtype.
Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);

// F::channel_shuffle (torch.nn.functional.channel_shuffle, ShuffleNet's): [N, C, *] with C = g * k,
// output channel i * g + j taking input channel j * k + i ([N, g, k, *] transposed to [N, k, g, *]);
// more than 2 dims (torch's rule), any dtype. A view, a transpose and one copy; differentiable.
Tensor channel_shuffle(const Tensor& input, int64_t groups);

// F::grid_sample (torch.nn.functional.grid_sample): input [N, C, H, W] read at grid [N, Ho, Wo, 2]
// -> [N, C, Ho, Wo], or [N, C, D, H, W] at [N, Do, Ho, Wo, 3] -> [N, C, Do, Ho, Wo]; the grid's last
// dim is (x, y[, z]) in [-1, 1] over the width, height (and depth). mode "bilinear" (trilinear for
// 5-D), "nearest" (round half to even) or "bicubic" (tricubic for 5-D, as torch 2.15); padding_mode "zeros", "border" or
// "reflection"; align_corners (default false, torch's default since 1.3, without its warning):
// whether -1 and 1 are the corner pixels' centers rather than the image's edges. Floating input and
// grid of the same dtype (float16/bfloat16 computed in float32). Differentiable w.r.t. input and grid
// (the nearest mode gives the grid a zero gradient, as torch); float32 under autocast. One kernel
// each way (kernels/common/grid_sample.h); the CPU backward is deterministic, CUDA's adds the
// input's gradient with atomics, as torch's. A grid entry that is NaN or infinite reads zero and
// gets a zero gradient. torch's checks and messages.
struct GridSampleFuncOptions {
  COLONY_ARG(std::string, mode) = "bilinear";
  COLONY_ARG(std::string, padding_mode) = "zeros";
  COLONY_ARG(std::optional<bool>, align_corners);
};
Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options = {});

// F::affine_grid (torch.nn.functional.affine_grid): the sampling grid of the affine maps theta
// [N, 2, 3] for size {N, C, H, W} -> [N, H, W, 2], or theta [N, 3, 4] for {N, C, D, H, W} -> [N, D, H, W,
// 3]: entry (.., y, x) is theta applied to (x', y'[, z'], 1), the output pixel's own coordinates in
// [-1, 1] (the pixels' centers: -1 and 1 at the corner pixels' centers with align_corners, half a pixel
// inside the edges without; 0 along a dim of size 1). Floating theta; differentiable w.r.t. theta
// (composed of a matrix product). torch's checks and messages.
Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size, bool align_corners = false);

// F::unfold (torch.nn.functional.unfold, im2col): the sliding blocks of an [N, C, H, W] (or
// unbatched [C, H, W]) input as columns, [N, C * kH * kW, L] (L blocks: along H, (H + 2 * padding -
// dilation * (kH - 1) - 1) / stride + 1, times the same along W), row (c, i, j) holding the block's
// element at kernel offset (i, j), zero where the block covers the padding. F::fold (col2im) is
// its adjoint: [N, C * kH * kW, L] (or unbatched) summed back into [N, C, output_size...]. One
// kernel each way (kernels/common/fold.h), the gradient of each the other; floating dtypes.
// torch's checks and messages. UnfoldFuncOptions(3).padding(1).stride(2), FoldFuncOptions({4, 5}, 2).
struct UnfoldFuncOptions {
  UnfoldFuncOptions(Int2 kernel_size) : kernel_size_(kernel_size) {}       // NOLINT: {2, 3}
  UnfoldFuncOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}    // NOLINT: F::unfold(x, 3)
  COLONY_ARG(Int2, kernel_size);
  COLONY_ARG(Int2, dilation) = 1;
  COLONY_ARG(Int2, padding) = 0;
  COLONY_ARG(Int2, stride) = 1;
};
Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);

struct FoldFuncOptions {
  FoldFuncOptions(Int2 output_size, Int2 kernel_size) : output_size_(output_size), kernel_size_(kernel_size) {}
  COLONY_ARG(Int2, output_size);
  COLONY_ARG(Int2, kernel_size);
  COLONY_ARG(Int2, dilation) = 1;
  COLONY_ARG(Int2, padding) = 0;
  COLONY_ARG(Int2, stride) = 1;
};
Tensor fold(const Tensor& input, const FoldFuncOptions& options);

// A convolution's padding: a size (one number or one per spatial dim) or torch's strings "valid"
// (no padding) and "same" (the output as large as the input: stride 1 only; dilation * (k - 1) in
// all, half on each side and the odd one on the right, as torch). Conv2dOptions(3, 8, 3).padding(1),
// .padding({1, 2}), .padding("same").
struct Conv2dPadding {
  Conv2dPadding(int64_t both) : size(both) {}                          // NOLINT
  Conv2dPadding(Int2 v) : size(v) {}                                   // NOLINT
  Conv2dPadding(std::initializer_list<int64_t> v) : size(v) {}         // NOLINT
  template <size_t N>
  Conv2dPadding(const char (&m)[N]) : mode(m) {}                      // NOLINT: .padding("same")
  Conv2dPadding(std::string m) : mode(std::move(m)) {}                 // NOLINT
  bool is_string() const { return !mode.empty(); }
  Int2 size = 0;
  std::string mode;  // "same" or "valid" when given as a string; empty for a size
};
struct Conv1dPadding {
  Conv1dPadding(int64_t v) : size(v) {}                                // NOLINT
  template <size_t N>
  Conv1dPadding(const char (&m)[N]) : mode(m) {}                      // NOLINT
  Conv1dPadding(std::string m) : mode(std::move(m)) {}                 // NOLINT
  bool is_string() const { return !mode.empty(); }
  int64_t size = 0;
  std::string mode;
};

struct Conv3dPadding {
  Conv3dPadding(int64_t all) : size(all) {}                            // NOLINT
  Conv3dPadding(Int3 v) : size(v) {}                                   // NOLINT
  Conv3dPadding(std::initializer_list<int64_t> v) : size(v) {}         // NOLINT
  template <size_t N>
  Conv3dPadding(const char (&m)[N]) : mode(m) {}                      // NOLINT: .padding("same")
  Conv3dPadding(std::string m) : mode(std::move(m)) {}                 // NOLINT
  bool is_string() const { return !mode.empty(); }
  Int3 size = 0;
  std::string mode;  // "same" or "valid" when given as a string; empty for a size
};

struct Conv2dFuncOptions {
  COLONY_ARG(Int2, stride) = 1;
  COLONY_ARG(Conv2dPadding, padding) = 0;
  COLONY_ARG(Int2, dilation) = 1;
  COLONY_ARG(int64_t, groups) = 1;
};
// input [N, C_in, H, W] or [C_in, H, W] (unbatched); padding a size or "same" / "valid".
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              const Conv2dFuncOptions& options = {});

// F::conv1d: input [N, C_in, L] or [C_in, L], weight [C_out, C_in / groups, k], bias [C_out] or
// undefined; conv2d's kernels on [N, C_in, 1, L].
struct Conv1dFuncOptions {
  COLONY_ARG(int64_t, stride) = 1;
  COLONY_ARG(Conv1dPadding, padding) = 0;
  COLONY_ARG(int64_t, dilation) = 1;
  COLONY_ARG(int64_t, groups) = 1;
};
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              const Conv1dFuncOptions& options = {});

// F::conv_transpose2d (nn/conv_transpose.h's module): input [N, C_in, H, W] or [C_in, H, W], weight
// [C_in, C_out / groups, kH, kW]; output_padding < stride.
struct ConvTranspose2dFuncOptions {
  COLONY_ARG(Int2, stride) = 1;
  COLONY_ARG(Int2, padding) = 0;
  COLONY_ARG(Int2, output_padding) = 0;
  COLONY_ARG(int64_t, groups) = 1;
  COLONY_ARG(Int2, dilation) = 1;
};
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        const ConvTranspose2dFuncOptions& options = {});
// F::conv_transpose1d: input [N, C_in, L] or [C_in, L], weight [C_in, C_out / groups, k].
struct ConvTranspose1dFuncOptions {
  COLONY_ARG(int64_t, stride) = 1;
  COLONY_ARG(int64_t, padding) = 0;
  COLONY_ARG(int64_t, output_padding) = 0;
  COLONY_ARG(int64_t, groups) = 1;
  COLONY_ARG(int64_t, dilation) = 1;
};
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        const ConvTranspose1dFuncOptions& options = {});

// F::conv3d: input [N, C_in, D, H, W] or [C_in, D, H, W] (unbatched), weight [C_out, C_in / groups,
// kD, kH, kW], bias [C_out] or undefined; padding a size or "same" / "valid" (Conv3dPadding).
struct Conv3dFuncOptions {
  COLONY_ARG(Int3, stride) = 1;
  COLONY_ARG(Conv3dPadding, padding) = 0;
  COLONY_ARG(Int3, dilation) = 1;
  COLONY_ARG(int64_t, groups) = 1;
};
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              const Conv3dFuncOptions& options = {});

// F::conv_transpose3d (nn/conv_transpose.h's ConvTranspose3d): input [N, C_in, D, H, W] or
// [C_in, D, H, W], weight [C_in, C_out / groups, kD, kH, kW]; output_padding < stride.
struct ConvTranspose3dFuncOptions {
  COLONY_ARG(Int3, stride) = 1;
  COLONY_ARG(Int3, padding) = 0;
  COLONY_ARG(Int3, output_padding) = 0;
  COLONY_ARG(int64_t, groups) = 1;
  COLONY_ARG(Int3, dilation) = 1;
};
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        const ConvTranspose3dFuncOptions& options = {});

struct MaxPool2dFuncOptions {
  MaxPool2dFuncOptions(Int2 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  MaxPool2dFuncOptions(int64_t kernel_size) : MaxPool2dFuncOptions(Int2(kernel_size)) {}      // NOLINT: MaxPool2d(2)
  COLONY_ARG(Int2, kernel_size);
  COLONY_ARG(Int2, stride);  // defaults to kernel_size
  COLONY_ARG(Int2, padding) = 0;
  COLONY_ARG(Int2, dilation) = 1;
  COLONY_ARG(bool, ceil_mode) = false;
};
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
// F::max_pool2d(x, 2): a 2x2 window with stride 2.
Tensor max_pool2d(const Tensor& input, int64_t kernel_size);

struct AvgPool2dFuncOptions {
  AvgPool2dFuncOptions(Int2 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  AvgPool2dFuncOptions(int64_t kernel_size) : AvgPool2dFuncOptions(Int2(kernel_size)) {}      // NOLINT: AvgPool2d(2)
  COLONY_ARG(Int2, kernel_size);
  COLONY_ARG(Int2, stride);
  COLONY_ARG(Int2, padding) = 0;
  COLONY_ARG(bool, ceil_mode) = false;
  COLONY_ARG(bool, count_include_pad) = true;
};
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
Tensor avg_pool2d(const Tensor& input, int64_t kernel_size);
Tensor adaptive_avg_pool2d(const Tensor& input, Int2 output_size);
// F::adaptive_avg_pool2d(x, 1), as torch's F.adaptive_avg_pool2d(x, 1) (a plain number matched
// both overloads around it).
Tensor adaptive_avg_pool2d(const Tensor& input, int64_t output_size);
struct AdaptiveAvgPool2dFuncOptions {
  AdaptiveAvgPool2dFuncOptions(Int2 output_size) : output_size_(output_size) {}  // NOLINT
  AdaptiveAvgPool2dFuncOptions(int64_t output_size) : output_size_(output_size) {}  // NOLINT
  COLONY_ARG(Int2, output_size);
};
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options);

// 1-D pooling over input [N, C, L] or [C, L]: the 2-D kernels on [N, C, 1, L].
struct MaxPool1dFuncOptions {
  MaxPool1dFuncOptions(int64_t kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  COLONY_ARG(int64_t, kernel_size);
  COLONY_ARG(int64_t, stride);  // defaults to kernel_size
  COLONY_ARG(int64_t, padding) = 0;
  COLONY_ARG(int64_t, dilation) = 1;
  COLONY_ARG(bool, ceil_mode) = false;
};
Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options);

struct AvgPool1dFuncOptions {
  AvgPool1dFuncOptions(int64_t kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  COLONY_ARG(int64_t, kernel_size);
  COLONY_ARG(int64_t, stride);
  COLONY_ARG(int64_t, padding) = 0;
  COLONY_ARG(bool, ceil_mode) = false;
  COLONY_ARG(bool, count_include_pad) = true;
};
Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& options);

struct AdaptiveAvgPool1dFuncOptions {
  AdaptiveAvgPool1dFuncOptions(int64_t output_size) : output_size_(output_size) {}  // NOLINT
  COLONY_ARG(int64_t, output_size);
};
Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& options);

// ---- Max pooling with indices, adaptive max pooling, max unpooling (nn/functional_pool.cc) ----
// The indices are int64 positions within each (n, c) input plane: ih * W + iw for the 2-D forms, l
// for the 1-D ones, as torch's return_indices. The indices take no gradient.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& options);

// An output size whose entries may be None (torch's adaptive pools' `(None, 7)`): a None dim keeps
// the input's size. Built from one number (printed as one, as torch keeps what was given), from
// {h, w} with std::nullopt for None, or from an Int2.
struct OptionalInt2 {
  OptionalInt2(int64_t both) : h(both), w(both), one_number(true) {}                    // NOLINT
  OptionalInt2(std::optional<int64_t> height, std::optional<int64_t> width) : h(height), w(width) {}
  OptionalInt2(Int2 v) : h(v.h), w(v.w) {}                                               // NOLINT
  std::optional<int64_t> h, w;
  bool one_number = false;
};

// Adaptive max pooling over [N, C, H, W] or [C, H, W]: output (i, j) is the maximum of input rows
// [floor(i * H / Ho), ceil((i + 1) * H / Ho)) and the matching columns (adaptive_avg_pool2d's
// windows), ties to the first in row-major order, a NaN beating every number.
struct AdaptiveMaxPool2dFuncOptions {
  AdaptiveMaxPool2dFuncOptions(OptionalInt2 output_size) : output_size_(output_size) {}  // NOLINT
  AdaptiveMaxPool2dFuncOptions(int64_t output_size) : output_size_(output_size) {}       // NOLINT
  COLONY_ARG(OptionalInt2, output_size);
};
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& options);
// Over [N, C, L] or [C, L].
struct AdaptiveMaxPool1dFuncOptions {
  AdaptiveMaxPool1dFuncOptions(int64_t output_size) : output_size_(output_size) {}  // NOLINT
  COLONY_ARG(int64_t, output_size);
};
Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& options);

// F::max_unpool2d (torch's partial inverse of max_pool2d): zeros of the output size with each input
// element written at its index in its (n, c) plane. The output size is (H - 1) * stride +
// kernel_size - 2 * padding per dim unless output_size gives it ([H, W] or [N, C, H, W], each within
// stride of that default, as torch). Differentiable in input (the gradient gathered at the
// indices); an index outside the output plane is an error (on CUDA, scatter's).
struct MaxUnpool2dFuncOptions {
  MaxUnpool2dFuncOptions(Int2 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  MaxUnpool2dFuncOptions(int64_t kernel_size) : MaxUnpool2dFuncOptions(Int2(kernel_size)) {}      // NOLINT
  COLONY_ARG(Int2, kernel_size);
  COLONY_ARG(Int2, stride);  // defaults to kernel_size
  COLONY_ARG(Int2, padding) = 0;
  COLONY_ARG(std::optional<std::vector<int64_t>>, output_size);
};
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& options);
// Over [N, C, L] or [C, L]; output_size [L] or [N, C, L].
struct MaxUnpool1dFuncOptions {
  MaxUnpool1dFuncOptions(int64_t kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  COLONY_ARG(int64_t, kernel_size);
  COLONY_ARG(int64_t, stride);  // defaults to kernel_size
  COLONY_ARG(int64_t, padding) = 0;
  COLONY_ARG(std::optional<std::vector<int64_t>>, output_size);
};
Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& options);

// ---- 3-D pooling, power-average and fractional max pooling (nn/functional_pool3d.cc) ----
// Input [N, C, D, H, W] or [C, D, H, W] (unbatched), torch's defaults, shapes and messages. The
// indices are int64 positions (iz * H + iy) * W + ix within each (n, c) input volume.
struct MaxPool3dFuncOptions {
  MaxPool3dFuncOptions(Int3 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  MaxPool3dFuncOptions(int64_t kernel_size) : MaxPool3dFuncOptions(Int3(kernel_size)) {}      // NOLINT
  COLONY_ARG(Int3, kernel_size);
  COLONY_ARG(Int3, stride);  // defaults to kernel_size
  COLONY_ARG(Int3, padding) = 0;
  COLONY_ARG(Int3, dilation) = 1;
  COLONY_ARG(bool, ceil_mode) = false;
};
Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& options);

// Each output is its window's sum divided by divisor_override when given, else by the window's
// size within the padded input (count_include_pad) or the input alone.
struct AvgPool3dFuncOptions {
  AvgPool3dFuncOptions(Int3 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  AvgPool3dFuncOptions(int64_t kernel_size) : AvgPool3dFuncOptions(Int3(kernel_size)) {}      // NOLINT
  COLONY_ARG(Int3, kernel_size);
  COLONY_ARG(Int3, stride);  // defaults to kernel_size
  COLONY_ARG(Int3, padding) = 0;
  COLONY_ARG(bool, ceil_mode) = false;
  COLONY_ARG(bool, count_include_pad) = true;
  COLONY_ARG(std::optional<int64_t>, divisor_override);
};
Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& options);

// A 3-D output size whose entries may be None (std::nullopt: keep the input's size), as OptionalInt2.
struct OptionalInt3 {
  OptionalInt3(int64_t all) : d(all), h(all), w(all), one_number(true) {}  // NOLINT
  OptionalInt3(std::optional<int64_t> depth, std::optional<int64_t> height, std::optional<int64_t> width)
      : d(depth), h(height), w(width) {}
  OptionalInt3(Int3 v) : d(v.d), h(v.h), w(v.w) {}  // NOLINT
  std::optional<int64_t> d, h, w;
  bool one_number = false;
};

// Adaptive pooling: output (i, j, k) covers input depths [floor(i * D / Do), ceil((i + 1) * D / Do)),
// likewise rows and columns; the average, or the maximum (max pooling's tie rule) and its index.
struct AdaptiveAvgPool3dFuncOptions {
  AdaptiveAvgPool3dFuncOptions(OptionalInt3 output_size) : output_size_(output_size) {}  // NOLINT
  AdaptiveAvgPool3dFuncOptions(int64_t output_size) : output_size_(output_size) {}       // NOLINT
  AdaptiveAvgPool3dFuncOptions(Int3 output_size) : output_size_(output_size) {}          // NOLINT
  COLONY_ARG(OptionalInt3, output_size);
};
Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& options);
using AdaptiveMaxPool3dFuncOptions = AdaptiveAvgPool3dFuncOptions;
Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& options);

// F::max_unpool3d: max_unpool2d's rules over volumes; output_size [D, H, W] or [N, C, D, H, W].
struct MaxUnpool3dFuncOptions {
  MaxUnpool3dFuncOptions(Int3 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  MaxUnpool3dFuncOptions(int64_t kernel_size) : MaxUnpool3dFuncOptions(Int3(kernel_size)) {}      // NOLINT
  COLONY_ARG(Int3, kernel_size);
  COLONY_ARG(Int3, stride);  // defaults to kernel_size
  COLONY_ARG(Int3, padding) = 0;
  COLONY_ARG(std::optional<std::vector<int64_t>>, output_size);
};
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& options);

// F::lp_pool1d/2d/3d: (sum over the window of x^p)^(1/p), composed as torch's functional is:
// avg_pool(x.pow(p)) * window size, sign(s) * relu(|s|), then pow(1/p) (no padding, stride
// defaulting to kernel_size). p = +inf is max_pool of |x|, -inf minus max_pool of -|x|; p = 0 is
// refused. Differentiable through its parts (so a window whose sum is 0 gets torch's gradient).
struct LPPool1dFuncOptions {
  LPPool1dFuncOptions(double norm_type, int64_t kernel_size) : norm_type_(norm_type), kernel_size_(kernel_size) {}
  COLONY_ARG(double, norm_type);
  COLONY_ARG(int64_t, kernel_size);
  COLONY_ARG(std::optional<int64_t>, stride);  // None: kernel_size
  COLONY_ARG(bool, ceil_mode) = false;
};
Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& options);
struct LPPool2dFuncOptions {
  LPPool2dFuncOptions(double norm_type, Int2 kernel_size) : norm_type_(norm_type), kernel_size_(kernel_size) {}
  COLONY_ARG(double, norm_type);
  COLONY_ARG(Int2, kernel_size);
  COLONY_ARG(std::optional<Int2>, stride);
  COLONY_ARG(bool, ceil_mode) = false;
};
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& options);
struct LPPool3dFuncOptions {
  LPPool3dFuncOptions(double norm_type, Int3 kernel_size) : norm_type_(norm_type), kernel_size_(kernel_size) {}
  COLONY_ARG(double, norm_type);
  COLONY_ARG(Int3, kernel_size);
  COLONY_ARG(std::optional<Int3>, stride);
  COLONY_ARG(bool, ceil_mode) = false;
};
Tensor lp_pool3d(const Tensor& input, const LPPool3dFuncOptions& options);

// An output ratio per spatial dim, from one number for all or one per dim (torch's _pair/_triple of
// a float).
struct Ratio2 {
  Ratio2(double both) : h(both), w(both) {}  // NOLINT
  Ratio2(double height, double width) : h(height), w(width) {}
  double h, w;
};
struct Ratio3 {
  Ratio3(double all) : d(all), h(all), w(all) {}  // NOLINT
  Ratio3(double depth, double height, double width) : d(depth), h(height), w(width) {}
  double d, h, w;
};

// F::fractional_max_pool2d/3d (Graham's fractional max pooling): kernel_size-wide max windows at
// pseudo-random starts, so the output is output_size, or int(input size * output_ratio) per dim
// (exactly one of the two is needed). _random_samples ([N, C, 2] or [N, C, 3], the input's dtype,
// values in [0, 1)) fixes the starts, as torch's argument of that name; without it they are drawn
// from Colony's generator (torch.rand's place in torch's functional: the CPU or the device's
// Philox stream, so manual_seed makes them reproducible, though not torch's numbers).
struct FractionalMaxPool2dFuncOptions {
  FractionalMaxPool2dFuncOptions(Int2 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  FractionalMaxPool2dFuncOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  COLONY_ARG(Int2, kernel_size);
  COLONY_ARG(std::optional<Int2>, output_size);
  COLONY_ARG(std::optional<Ratio2>, output_ratio);
  COLONY_ARG(Tensor, _random_samples);
};
Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool2dFuncOptions& options);
struct FractionalMaxPool3dFuncOptions {
  FractionalMaxPool3dFuncOptions(Int3 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  FractionalMaxPool3dFuncOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  COLONY_ARG(Int3, kernel_size);
  COLONY_ARG(std::optional<Int3>, output_size);
  COLONY_ARG(std::optional<Ratio3>, output_ratio);
  COLONY_ARG(Tensor, _random_samples);
};
Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool3dFuncOptions& options);

// Batch normalization over dim 1. In training mode the batch statistics normalize and the running
// estimates (when given) are updated in place with `momentum` and the unbiased variance.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool training = false,
                  double momentum = 0.1, double eps = 1e-5);

// F::group_norm (colony::group_norm): input [N, C, *], C divisible by num_groups; weight and bias
// [C] or undefined.
struct GroupNormFuncOptions {
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT
  COLONY_ARG(int64_t, num_groups);
  COLONY_ARG(Tensor, weight);
  COLONY_ARG(Tensor, bias);
  COLONY_ARG(double, eps) = 1e-5;
};
Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options);

// F::local_response_norm (torch.nn.functional.local_response_norm, AlexNet's): x / (k + alpha *
// mean of x^2 over the `size` channels around each one)^beta, the window size / 2 channels before and
// (size - 1) / 2 after, zeros past the ends counted in the mean. [N, C, *] with at least 3 dims.
// Composed as torch's functional is (square, pad, average pooling over the channels, pow, divide),
// so it is differentiable and runs on both devices.
struct LocalResponseNormFuncOptions {
  LocalResponseNormFuncOptions(int64_t size) : size_(size) {}  // NOLINT
  COLONY_ARG(int64_t, size);
  COLONY_ARG(double, alpha) = 1e-4;
  COLONY_ARG(double, beta) = 0.75;
  COLONY_ARG(double, k) = 1.0;
};
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options);

// F::instance_norm: input [N, C, *], each (sample, channel) normalized over *. With use_input_stats
// (the default) the instance statistics normalize and running_mean/var (when given, [C]) take the
// batch's mean of them (momentum, unbiased variance), as PyTorch; without, the running estimates
// normalize. batch_norm on [1, N * C, *] (nn/functional_norm.cc).
struct InstanceNormFuncOptions {
  COLONY_ARG(Tensor, running_mean);
  COLONY_ARG(Tensor, running_var);
  COLONY_ARG(Tensor, weight);
  COLONY_ARG(Tensor, bias);
  COLONY_ARG(bool, use_input_stats) = true;
  COLONY_ARG(double, momentum) = 0.1;
  COLONY_ARG(double, eps) = 1e-5;
};
Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options = {});

// ---- Losses (nn/functional_loss.cc; the modules are nn/loss.h) ----------------------------------
// PyTorch's semantics: Reduction::Mean (the default), Sum or None (the per-element losses, shaped as
// PyTorch shapes them); a loss over 16-bit inputs computes in float32 under autocast (the policy
// table, autograd/autocast.h). Reduction::BatchMean is kl_div's alone ("batchmean": the sum divided
// by the batch size); every other loss refuses it.

struct CrossEntropyFuncOptions {
  CrossEntropyFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(int64_t, ignore_index) = -100;
  COLONY_ARG(double, label_smoothing) = 0.0;
  // Per-class weights [C]: each target's loss is scaled by its class's weight, and Mean divides by
  // the sum of the weights of the targets counted (ignore_index excluded), as PyTorch.
  COLONY_ARG(Tensor, weight);
};
// input [N, C] logits (or [C], or [N, C, d...]); target either class indices (int64 or int32) of
// shape [N] ([], [N, d...]), or class probabilities of the input's shape and a floating dtype
// (distillation; label_smoothing mixes them with the uniform distribution; no ignore_index).
// Index targets without a weight run the fused kernel (one pass each way); a weight or probability
// targets compose log_softmax with differentiable ops.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options = {});

struct NLLLossFuncOptions {
  NLLLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(int64_t, ignore_index) = -100;
  COLONY_ARG(Tensor, weight);  // per-class [C], as cross_entropy's
};
// input [N, C] log-probabilities (or [C], [N, C, d...]); target int64 or int32 class indices.
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {});

// The regression losses: input and target of one shape (PyTorch broadcasts other shapes with a
// warning that it is likely a mistake; Colony refuses them).
struct MSELossFuncOptions {
  MSELossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
};
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options);
// |input - target|.
struct L1LossFuncOptions {
  L1LossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
};
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options = {});
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target); beta = 0 is l1_loss.
struct SmoothL1LossFuncOptions {
  SmoothL1LossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(double, beta) = 1.0;  // >= 0
};
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options = {});
// 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta): smooth_l1_loss times beta = delta.
struct HuberLossFuncOptions {
  HuberLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(double, delta) = 1.0;  // > 0
};
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options = {});

// -weight (target log(input) + (1 - target) log(1 - input)), each log clamped to >= -100 as
// PyTorch's; input probabilities in [0, 1] and target of the input's shape; weight broadcasts to
// it. The gradient is PyTorch's: weight (input - target) / max(input (1 - input), 1e-12), finite
// where a sigmoid saturated to exactly 0 or 1. Refused under CUDA autocast, as in PyTorch (use
// binary_cross_entropy_with_logits, which is safe to autocast).
struct BinaryCrossEntropyFuncOptions {
  BinaryCrossEntropyFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(Tensor, weight);
};
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BinaryCrossEntropyFuncOptions& options = {});
// binary_cross_entropy(sigmoid(input), target) without forming the sigmoid: (1 - target) input -
// l log_sigmoid(input), where l = 1 + (pos_weight - 1) target and log_sigmoid(x) = min(x, 0) -
// log1p(exp(-|x|)) (with no pos_weight: max(x, 0) - x target + log1p(exp(-|x|))), stable for any
// logit. pos_weight (the positives' weight per class, broadcast along the last dim) and weight
// broadcast to the input's shape.
struct BinaryCrossEntropyWithLogitsFuncOptions {
  BinaryCrossEntropyWithLogitsFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(Tensor, weight);
  COLONY_ARG(Tensor, pos_weight);
};
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options = {});

// The KL divergence of input (log-probabilities) from target: target (log target - input), 0 where
// target is 0; with log_target, target holds log-probabilities: exp(target) (target - input).
// Reduction::BatchMean divides the sum by input.size(0) (the mathematically right mean; PyTorch's
// "mean" averages over every element). input and target broadcast.
struct KLDivFuncOptions {
  KLDivFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(bool, log_target) = false;
};
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options = {});

// sum(x1 * x2 over dim) / (max(||x1||, eps) max(||x2||, eps)), as PyTorch 2.x computes it: each
// input divided by its own clamped norm first (so |result| <= 1), the clamp outside the gradient
// (PyTorch clamps the norms in place under no_grad). x1 and x2 broadcast; dim is removed.
struct CosineSimilarityFuncOptions {
  COLONY_ARG(int64_t, dim) = 1;
  COLONY_ARG(double, eps) = 1e-8;
};
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options = {});

// Per pair: 1 - cos where target is 1, max(0, cos - margin) where target is -1 (0 for other
// target values), cos = x1.x2 / sqrt((|x1|^2 + 1e-12)(|x2|^2 + 1e-12)) over the last dim.
// x1, x2 [N, D] with target [N], or [D] with a 0-d target.
struct CosineEmbeddingLossFuncOptions {
  CosineEmbeddingLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(double, margin) = 0.0;
};
Tensor cosine_embedding_loss(const Tensor& x1, const Tensor& x2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options = {});

// ||x1 - x2 + eps||_p over the last dim (of the broadcast shape), as torch.pairwise_distance.
struct PairwiseDistanceFuncOptions {
  COLONY_ARG(double, p) = 2.0;
  COLONY_ARG(double, eps) = 1e-6;
  COLONY_ARG(bool, keepdim) = false;
};
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& options = {});

// ---- margin, ranking, triplet and likelihood losses (nn/functional_loss_margin.cc) ----
// max(0, -target (input1 - input2) + margin); the three of one rank (they broadcast).
struct MarginRankingLossFuncOptions {
  MarginRankingLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(double, margin) = 0.0;
};
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options = {});
// input where target is 1, max(0, margin - input) where target is -1 (both terms for any other
// target value, as ATen's).
struct HingeEmbeddingLossFuncOptions {
  HingeEmbeddingLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(double, margin) = 1.0;
};
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, const HingeEmbeddingLossFuncOptions& options = {});
// log(1 + exp(-target input)), elementwise (targets +-1).
struct SoftMarginLossFuncOptions {
  SoftMarginLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
};
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& options = {});
// -(y log sigmoid(x) + (1 - y) log sigmoid(-x)) times weight (per class, broadcast), averaged over
// the last (class) dim: one loss per sample before the reduction.
struct MultilabelSoftMarginLossFuncOptions {
  MultilabelSoftMarginLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(Tensor, weight);
};
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options = {});
// Per sample of input [N, C] (or [C]) with int64 class target [N] (or 0-d / [1]): the sum over the
// other classes j of max(0, margin - x[y] + x[j])^p (p 1 or 2), times weight[y], divided by C.
struct MultiMarginLossFuncOptions {
  MultiMarginLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(int64_t, p) = 1;
  COLONY_ARG(double, margin) = 1.0;
  COLONY_ARG(Tensor, weight);
};
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginLossFuncOptions& options = {});
// Per sample of input [N, C] (or [C]) with an int64 target of the same shape listing its classes up
// to the first -1: the sum over listed classes j and unlisted classes i of max(0, 1 - (x[j] - x[i])),
// divided by C. Memory [N, C, C].
struct MultilabelMarginLossFuncOptions {
  MultilabelMarginLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
};
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options = {});
// max(0, d(anchor, positive) - d(anchor, negative) + margin) with d = pairwise_distance(p, eps);
// swap: the negative's distance is the smaller of d(a, n) and d(p, n). The three of one rank.
struct TripletMarginLossFuncOptions {
  TripletMarginLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(double, margin) = 1.0;
  COLONY_ARG(double, p) = 2.0;
  COLONY_ARG(double, eps) = 1e-6;
  COLONY_ARG(bool, swap) = false;
};
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options = {});
// The same with any distance function (default pairwise_distance); margin must be > 0.
struct TripletMarginWithDistanceLossFuncOptions {
  using DistanceFunction = std::function<Tensor(const Tensor&, const Tensor&)>;
  TripletMarginWithDistanceLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(std::optional<DistanceFunction>, distance_function) = std::nullopt;
  COLONY_ARG(double, margin) = 1.0;
  COLONY_ARG(bool, swap) = false;
};
Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& options = {});
// Poisson negative log likelihood: exp(input) - target input (log_input), or input - target
// log(input + eps); full adds Stirling's term target log target - target + log(2 pi target) / 2
// where target > 1.
struct PoissonNLLLossFuncOptions {
  PoissonNLLLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(bool, log_input) = true;
  COLONY_ARG(bool, full) = false;
  COLONY_ARG(double, eps) = 1e-8;
};
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossFuncOptions& options = {});
// Gaussian negative log likelihood: (log(max(var, eps)) + (input - target)^2 / max(var, eps)) / 2
// (+ log(2 pi) / 2 when full); var of input's shape, one dim short of it, or with one dim of size 1
// (homoscedastic); the clamp at eps does not stop var's gradient, as torch's.
struct GaussianNLLLossFuncOptions {
  GaussianNLLLossFuncOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  COLONY_ARG(Reduction, reduction);
  COLONY_ARG(bool, full) = false;
  COLONY_ARG(double, eps) = 1e-6;
};
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var,
                         const GaussianNLLLossFuncOptions& options = {});
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, double var,
                         const GaussianNLLLossFuncOptions& options = {});

// ---- CTC loss (nn/functional_loss_ctc.cc; the module is nn/loss.h's CTCLoss) ----
// torch.nn.functional.ctc_loss: log_probs [T, N, C] (log_softmax over C; unbatched [T, C]),
// targets [N, S] padded or 1-D concatenated (sum(target_lengths) labels; for unbatched input, the
// one target); input_lengths and target_lengths [N] integral tensors (on any device; copied to the
// host, as torch copies them) or vectors (libtorch's IntArrayRef overload). Reduction::None gives
// the N losses (0-d for unbatched), Sum their sum, Mean each loss divided by
// clamp(target_length, 1) and averaged over the batch. A target longer than its input allows (or
// with too many repeats) has loss inf; zero_infinity makes that loss 0 and its gradient 0.
// float32 and float64 (16-bit inputs compute in float32 under autocast, torch's float32 row).
// torch's checks and messages; besides, a label outside [0, C) is an error (torch does not check).
struct CTCLossFuncOptions {
  COLONY_ARG(int64_t, blank) = 0;
  COLONY_ARG(Reduction, reduction) = Reduction::Mean;
  COLONY_ARG(bool, zero_infinity) = false;
};
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options = {});
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, const CTCLossFuncOptions& options = {});

}  // namespace colony::nn::functional

namespace colony {
namespace F = nn::functional;
}
