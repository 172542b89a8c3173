// F::interpolate, F::pixel_shuffle, F::pixel_unshuffle and F::channel_shuffle. The nearest modes and the shuffles are
// composed of differentiable ops (index_select, reshape, permute); area is adaptive_avg_pool2d.
//
// Every interpolating mode is separable, and ATen's CPU kernels compute it that way: each spatial
// dim is resampled in turn, the last first, output position i reading `k` input positions with
// weights (its "taps"). A pass here is one index_select for the nearest modes; for the weighted
// ones, a product with the [out, in] interpolation matrix along short dims, or one pass of the
// resample kernel (autograd/resample.h: the taps as consecutive positions from a start, the
// gradient its adjoint kernel) along long ones (resample() below). The positions and weights
// follow ATen's formulas (UpSample.h and the CPU UpSampleKernel: area_pixel_compute_scale,
// area_pixel_compute_source_index, guard_index_and_lambda, the cubic coefficients, the
// antialiasing filters), in the type ATen computes them in (float for float32, double for
// float64), so the taps are ATen's; a sum may round differently in the last bit. On CUDA the
// matrix product follows torch.backends.cuda.matmul.allow_tf32 (off by default, as torch's).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/autograd.h"
#include "autograd/resample.h"
#include "nn/functional.h"
#include "nn/interpolate_path.h"
#include "ops/resample_ops.h"

namespace colony::nn::functional {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("interpolate: " + what); }

// The input positions and weights of one resampled dim: output position i reads index[i * k + j]
// with weight[i * k + j], j < k. Weights are empty for the nearest modes (one tap of weight 1).
struct Taps {
  int64_t k = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
};

// ATen's floorf: the index is floored in float even where the position is a double (a float64
// input), so a position a hair below an integer rounds up to it first, as torch's does.
int64_t floor_as_float(double v) { return static_cast<int64_t>(std::floor(static_cast<float>(v))); }

// area_pixel_compute_scale: the input distance between adjacent output positions.
template <typename C>
C pixel_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<C>(in - 1) / static_cast<C>(out - 1) : C(0);
  // A given scale factor is used as given (1 / scale), as with recompute_scale_factor false.
  if (scale && *scale > 0) return static_cast<C>(1.0 / *scale);
  return static_cast<C>(in) / static_cast<C>(out);
}

// area_pixel_compute_source_index: the input position of output position i. Pixel centers map
// to pixel centers; a linear position left of the first center is clamped to it (both taps read
// pixel 0 there anyway), a cubic one is not, as its four weights depend on it.
template <typename C>
C source_position(C scale, int64_t i, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<C>(i);
  const C src = scale * (static_cast<C>(i) + C(0.5)) - C(0.5);
  return (!cubic && src < C(0)) ? C(0) : src;
}

// "nearest": torch's nearest_idx, the OpenCV floor rule (kept by torch for compatibility), with
// its exact cases for equal and doubled sizes. "nearest-exact": the pixel whose center is nearest
// (Pillow, scikit-image). Both in float, as torch computes them for every dtype.
Taps nearest_taps(int64_t in, int64_t out, std::optional<double> scale, bool exact) {
  Taps t;
  t.index.resize(out);
  const float s = scale && *scale > 0 ? static_cast<float>(1.0 / *scale) : static_cast<float>(in) / out;
  for (int64_t i = 0; i < out; ++i) {
    int64_t src;
    if (exact) {
      src = floor_as_float((static_cast<double>(i) + 0.5) * s);  // torch: floorf((i + 0.5) * scale)
    } else if (out == in) {
      src = i;
    } else if (out == 2 * in) {
      src = i >> 1;
    } else {
      src = static_cast<int64_t>(std::floor(static_cast<float>(i) * s));
    }
    t.index[i] = std::min(src, in - 1);
  }
  return t;
}

// Linear: two neighbours, lambda the distance past the first (clamped to [0, 1]); the last pixel
// pairs with itself. Equal sizes copy, whatever the scale (torch's compute_source_index_and_lambda).
template <typename C>
Taps linear_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  Taps t;
  t.k = 2;
  t.index.resize(2 * out);
  t.weight.resize(2 * out);
  const C ratio = pixel_scale<C>(in, out, align_corners, scale);
  for (int64_t i = 0; i < out; ++i) {
    int64_t i0 = i, i1 = i;
    C l1 = 0;
    if (out != in) {
      const C src = source_position<C>(ratio, i, align_corners, /*cubic=*/false);
      i0 = std::min(floor_as_float(src), in - 1);
      l1 = std::min(std::max(src - static_cast<C>(i0), C(0)), C(1));
      i1 = i0 + (i0 < in - 1 ? 1 : 0);
    }
    t.index[2 * i] = i0;
    t.index[2 * i + 1] = i1;
    t.weight[2 * i] = static_cast<double>(C(1) - l1);
    t.weight[2 * i + 1] = static_cast<double>(l1);
  }
  return t;
}

// Keys' cubic convolution kernel: A = -0.75 without antialiasing (OpenCV's), -0.5 with it
// (Pillow's), as torch.
template <typename C>
C cubic_near(C x, C a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }  // |x| <= 1
template <typename C>
C cubic_far(C x, C a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }  // 1 < |x| < 2

// Bicubic: four neighbours around the position, indices clamped to the image (the edge pixel
// repeated), weights from the fractional part.
template <typename C>
Taps cubic_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  Taps t;
  t.k = 4;
  t.index.resize(4 * out);
  t.weight.resize(4 * out);
  const C ratio = pixel_scale<C>(in, out, align_corners, scale);
  const C a = C(-0.75);
  for (int64_t i = 0; i < out; ++i) {
    const C src = source_position<C>(ratio, i, align_corners, /*cubic=*/true);
    const int64_t i0 = std::min(floor_as_float(src), in - 1);
    const C f = std::min(std::max(src - static_cast<C>(i0), C(0)), C(1));
    const C w[4] = {cubic_far<C>(f + C(1), a), cubic_near<C>(f, a), cubic_near<C>(C(1) - f, a),
                    cubic_far<C>((C(1) - f) + C(1), a)};  // torch's (1 - t) + 1
    for (int64_t j = 0; j < 4; ++j) {
      t.index[4 * i + j] = std::min(std::max<int64_t>(i0 + j - 1, 0), in - 1);
      t.weight[4 * i + j] = static_cast<double>(w[j]);
    }
  }
  return t;
}

// The antialiasing filters, as torch's (after Pillow): the triangle for bilinear, Keys' cubic with
// a = -0.5 for bicubic, Lanczos-3 for lanczos.
template <typename C>
C triangle_filter(C x) {
  x = std::abs(x);
  return x < C(1) ? C(1) - x : C(0);
}
template <typename C>
C keys_cubic_filter(C x) {
  x = std::abs(x);
  if (x < C(1)) return cubic_near<C>(x, C(-0.5));
  if (x < C(2)) return cubic_far<C>(x, C(-0.5));
  return C(0);
}
// Lanczos-3: sinc(x) sinc(x / 3) on [-3, 3), Pillow's LANCZOS filter (torch's "lanczos" mode;
// checked against torch 2.15's outputs to 6e-16 in float64 by the golden cases).
template <typename C>
C sinc(C x) {
  if (x == C(0)) return C(1);
  x *= static_cast<C>(M_PI);
  return std::sin(x) / x;
}
template <typename C>
C lanczos3_filter(C x) {
  return x >= C(-3) && x < C(3) ? sinc<C>(x) * sinc<C>(x / C(3)) : C(0);
}

enum class Filter { triangle, keys_cubic, lanczos3 };
// The filter's support in input pixels at scale 1: 2 for the triangle, 4 for the cubic, 6 for Lanczos-3.
int64_t filter_width(Filter f) { return f == Filter::triangle ? 2 : f == Filter::keys_cubic ? 4 : 6; }
template <typename C>
C apply_filter(Filter f, C x) {
  switch (f) {
    case Filter::triangle: return triangle_filter<C>(x);
    case Filter::keys_cubic: return keys_cubic_filter<C>(x);
    default: return lanczos3_filter<C>(x);
  }
}

// Antialiased resampling (torch's _compute_indices_min_size_weights_aa): when downsampling by s the
// filter is stretched by s, so every input pixel under it contributes; the weights are normalized
// to sum to 1. Output i covers input [xmin, xmin + xsize); the unused taps get weight 0.
template <typename C>
Taps antialias_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale, Filter filter) {
  const C ratio = pixel_scale<C>(in, out, align_corners, scale);
  const C interp = static_cast<C>(filter_width(filter));
  const C support = ratio >= C(1) ? interp * C(0.5) * ratio : interp * C(0.5);
  const C invscale = ratio >= C(1) ? C(1) / ratio : C(1);
  Taps t;
  t.k = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  t.index.resize(t.k * out);
  t.weight.resize(t.k * out);
  std::vector<C> w(t.k);
  for (int64_t i = 0; i < out; ++i) {
    const C center = ratio * (static_cast<C>(i) + C(0.5));
    const int64_t xmin = std::max(static_cast<int64_t>(center - support + C(0.5)), int64_t{0});
    int64_t xsize = std::min(static_cast<int64_t>(center + support + C(0.5)), in) - xmin;
    xsize = std::min(std::max<int64_t>(xsize, 0), t.k);  // torch clips a rounding overshoot the same way
    C total = 0;
    for (int64_t j = 0; j < xsize; ++j) {
      const C x = (static_cast<C>(j + xmin) - center + C(0.5)) * invscale;
      w[j] = apply_filter<C>(filter, x);
      total += w[j];
    }
    for (int64_t j = 0; j < t.k; ++j) {
      t.index[t.k * i + j] = j < xsize ? xmin + j : xmin;
      t.weight[t.k * i + j] = j < xsize && total != C(0) ? static_cast<double>(w[j] / total) : 0.0;
    }
  }
  return t;
}

// The taps in the kernel's form (ops/resample_ops.h): each output's taps as consecutive input
// positions from a start. ATen's clamped edge taps (cubic's, the last pixel's linear partner) that
// land on one pixel add their weights there, as the interpolation matrix sums them; fewer input
// positions than taps shorten every output to the whole input.
raw::ResampleTaps consecutive_taps(const Taps& t, int64_t in) {
  const int64_t out = static_cast<int64_t>(t.index.size()) / t.k;
  raw::ResampleTaps r;
  r.in = in;
  r.taps = std::min(t.k, in);
  r.start.resize(out);
  r.weight.assign(static_cast<size_t>(out * r.taps), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    const int64_t* index = &t.index[i * t.k];
    const int64_t first = *std::min_element(index, index + t.k);
    r.start[i] = std::max<int64_t>(std::min(first, in - r.taps), 0);
    for (int64_t j = 0; j < t.k; ++j) r.weight[i * r.taps + index[j] - r.start[i]] += t.weight[i * t.k + j];
  }
  return r;
}

// The taps as the [out, in] interpolation matrix applied along the dim by one matrix product.
Tensor matrix_taps(const Tensor& x, int64_t dim, const raw::ResampleTaps& taps) {
  const int64_t in = taps.in, out = taps.out();
  std::vector<double> m(static_cast<size_t>(out * in), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    for (int64_t j = 0; j < taps.taps; ++j) m[i * in + taps.start[i] + j] = taps.weight[i * taps.taps + j];
  }
  const Tensor matrix = colony::to(raw::from_vector<double>(m, {out, in}), x.device(), x.dtype());
  if (dim == x.dim() - 1) return colony::matmul(x, colony::transpose(matrix, 0, 1));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  Shape result = x.sizes();
  result[dim] = out;
  return colony::reshape(colony::matmul(matrix, colony::reshape(x, {outer, in, inner})), result);
}

thread_local ResamplePath forced_path = ResamplePath::automatic;

// The matrix product up to kMatrixMaxInput input pixels, the resample kernel beyond. Set by
// benchmarks/interpolate_bench with INTERPOLATE_PATH=matrix / =kernel in alternating rounds
// (/tmp/interp/ab.sh: main's build, this one, kernel forced, matrix forced; 3 rounds, --threads 2
// --trials 5; Intel Xeon VM, 2 cores, load 20-23, 2026-12-07 03:55 UTC), median kernel / matrix us:
// in = 32 ([8, 64, 32, 32]) bicubic x2 29,408 / 20,963, antialiased bilinear x0.5 1,186 / 677
// (forward + backward 18,794 / 1,561), bilinear x2 10,869 / 14,403; in = 128 ([4, 3, 128, 128])
// bilinear x2 931 / 18,651; in = 256 12,508 / 71,650; in = 512 29,201 / 265,863. Feature maps of
// 32 keep the matrix; images from 128 take the kernel; 64 was not measured.
constexpr int64_t kMatrixMaxInput = 64;

// Resamples dim `dim` of x by its taps: nearest taps are one gather; weighted taps take the
// matrix product or the resample kernel (autograd/resample.h).
Tensor resample(const Tensor& x, int64_t dim, const Taps& taps) {
  if (taps.weight.empty()) {
    return colony::index_select(x, dim, raw::from_vector<int64_t>(taps.index, {}, TensorOptions(kInt64).device(x.device())));
  }
  const raw::ResampleTaps consecutive = consecutive_taps(taps, x.size(dim));
  const bool matrix = forced_path == ResamplePath::automatic ? x.size(dim) <= kMatrixMaxInput
                                                             : forced_path == ResamplePath::matrix;
  return matrix ? matrix_taps(x, dim, consecutive) : colony::resample(x, dim, consecutive);
}

bool is_one_of(const std::string& s, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (s == n) return true;
  }
  return false;
}

// The spatial dims each mode needs, 0 for the modes that take 1 to 3.
int64_t spatial_dims_of(const std::string& mode) {
  if (mode == "linear") return 1;
  if (mode == "bilinear" || mode == "bicubic" || mode == "lanczos") return 2;
  if (mode == "trilinear") return 3;
  return 0;
}

std::string sizes_str(const Tensor& t, int64_t from) {
  std::string s = "[";
  for (int64_t d = from; d < t.dim(); ++d) s += (d > from ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// "area": adaptive average pooling to the output size, the 2-D kernel for 1 and 2 spatial dims;
// for 3 the pooling is separable, so (H, W) are pooled first and then D, with H*W as a second dim
// whose size does not change (windows of one).
Tensor area(const Tensor& x, const std::vector<int64_t>& out) {
  const int64_t n = x.size(0), c = x.size(1);
  if (out.size() == 1) return colony::squeeze(colony::adaptive_avg_pool2d(colony::unsqueeze(x, 2), {1, out[0]}), 2);
  if (out.size() == 2) return colony::adaptive_avg_pool2d(x, {out[0], out[1]});
  const int64_t d = x.size(2);
  Tensor hw = colony::adaptive_avg_pool2d(colony::reshape(x, {n, c * d, x.size(3), x.size(4)}), {out[1], out[2]});
  hw = colony::reshape(hw, {n, c, d, out[1] * out[2]});
  return colony::reshape(colony::adaptive_avg_pool2d(hw, {out[0], out[1] * out[2]}), {n, c, out[0], out[1], out[2]});
}

}  // namespace

ForceResamplePath::ForceResamplePath(ResamplePath path) : previous_(forced_path) { forced_path = path; }
ForceResamplePath::~ForceResamplePath() { forced_path = previous_; }

Tensor interpolate(const Tensor& input_arg, const InterpolateFuncOptions& options) {
  const std::string& mode = options.mode();
  if (!is_one_of(mode, {"nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "lanczos", "area"})) {
    fail("unknown mode '" + mode +
         "'; expected one of nearest, nearest-exact, linear, bilinear, bicubic, trilinear, lanczos, area");
  }
  if (input_arg.dim() < 3 || input_arg.dim() > 5) {
    fail("expects a 3-D, 4-D or 5-D input [N, C, d1, ...] (1 to 3 spatial dims), got a " +
         std::to_string(input_arg.dim()) + "-D input");
  }
  const int64_t k = input_arg.dim() - 2;
  if (spatial_dims_of(mode) != 0 && spatial_dims_of(mode) != k) {
    fail("mode '" + mode + "' needs a " + std::to_string(spatial_dims_of(mode) + 2) + "-D input, got a " +
         std::to_string(input_arg.dim()) + "-D input");
  }
  const bool interpolating = spatial_dims_of(mode) != 0;
  if (options.align_corners() && !interpolating) {
    fail("align_corners can only be set with the interpolating modes: linear, bilinear, bicubic, trilinear (mode is '" +
         mode + "')");
  }
  const bool align_corners = options.align_corners().value_or(false);
  if (options.antialias() && !(mode == "bilinear" || mode == "bicubic" || mode == "lanczos")) {
    fail("antialias is restricted to the bilinear, bicubic and lanczos modes (4-D input); mode is '" + mode + "'");
  }
  // torch's lanczos is the antialiased filter only, with pixel centers aligned.
  if (mode == "lanczos" && options.align_corners().value_or(false)) fail("mode 'lanczos' does not support align_corners=True");
  if (mode == "lanczos" && !options.antialias()) fail("mode 'lanczos' requires antialias=True");
  if (options.size().has_value() == options.scale_factor().has_value()) {
    fail(options.size() ? "only one of size and scale_factor may be given" : "either size or scale_factor must be given");
  }
  if (options.size() && options.recompute_scale_factor().value_or(false)) {
    fail("recompute_scale_factor is not meaningful with an explicit size");
  }
  if (mode != "nearest" && mode != "nearest-exact" && !input_arg.is_floating_point()) {
    fail("mode '" + mode + "' needs a floating-point input, got " + std::string(dtype_name(input_arg.dtype())));
  }

  // Output sizes, and the scales the taps use: a given scale factor is used as given unless
  // recompute_scale_factor is set (area always recomputes: it pools to a size), as torch.
  std::vector<int64_t> out(k);
  std::vector<std::optional<double>> scales(k);
  if (options.size()) {
    const std::vector<int64_t>& size = *options.size();
    if (size.size() != 1 && static_cast<int64_t>(size.size()) != k) {
      fail("size " + shape_str(size) + " must give one size or one per spatial dim of the input " +
           sizes_str(input_arg, 2));
    }
    for (int64_t d = 0; d < k; ++d) out[d] = size.size() == 1 ? size[0] : size[d];
  } else {
    const std::vector<double>& sf = *options.scale_factor();
    if (sf.size() != 1 && static_cast<int64_t>(sf.size()) != k) {
      fail("scale_factor must give one factor or one per spatial dim of the input " + sizes_str(input_arg, 2) + ", got " +
           std::to_string(sf.size()));
    }
    const bool recompute = options.recompute_scale_factor().value_or(false) || mode == "area";
    for (int64_t d = 0; d < k; ++d) {
      const double s = sf.size() == 1 ? sf[0] : sf[d];
      if (!(s > 0) || !std::isfinite(s)) fail("scale_factor must be positive and finite, got " + std::to_string(s));
      out[d] = static_cast<int64_t>(static_cast<double>(input_arg.size(d + 2)) * s);
      if (!recompute) scales[d] = s;
    }
  }
  for (int64_t d = 0; d < k; ++d) {
    if (input_arg.size(d + 2) <= 0 || out[d] <= 0) {
      fail("input and output sizes must be greater than 0, got input " + sizes_str(input_arg, 2) + " and output " +
           shape_str(out));
    }
  }

  const Tensor input = autocast::cast(autocast::Op::interpolate, input_arg);
  // One op in torch's policy: the products inside stay in the input's dtype, not autocast's.
  AutocastGuard no_autocast(input.device().type, /*enabled=*/false);
  if (mode == "area") return area(input, out);
  // float16 and bfloat16 are interpolated in float32 and rounded once, as torch's kernels
  // accumulate in float.
  const bool widen = input.dtype() == kFloat16 || input.dtype() == kBFloat16;
  Tensor x = widen ? colony::to(input, input.device(), kFloat32) : input;
  const bool in_double = x.dtype() == kFloat64;
  for (int64_t d = k - 1; d >= 0; --d) {  // the last dim first, as torch's separable kernels
    const int64_t in = x.size(d + 2);
    Taps taps;
    if (mode == "nearest" || mode == "nearest-exact") {
      taps = nearest_taps(in, out[d], scales[d], mode == "nearest-exact");
    } else if (options.antialias()) {
      if (out[d] == in) continue;  // torch skips the dims whose size does not change
      const Filter filter =
          mode == "bicubic" ? Filter::keys_cubic : mode == "lanczos" ? Filter::lanczos3 : Filter::triangle;
      taps = in_double ? antialias_taps<double>(in, out[d], align_corners, scales[d], filter)
                       : antialias_taps<float>(in, out[d], align_corners, scales[d], filter);
    } else if (mode == "bicubic") {
      taps = in_double ? cubic_taps<double>(in, out[d], align_corners, scales[d])
                       : cubic_taps<float>(in, out[d], align_corners, scales[d]);
    } else {
      if (out[d] == in) continue;  // linear copies equal sizes
      taps = in_double ? linear_taps<double>(in, out[d], align_corners, scales[d])
                       : linear_taps<float>(in, out[d], align_corners, scales[d]);
    }
    x = resample(x, d + 2, taps);
  }
  return widen ? colony::to(x, x.device(), input.dtype()) : x;
}

namespace {

void check_shuffle(const Tensor& input, int64_t factor, const char* op, const char* factor_name) {
  if (factor <= 0) {
    throw std::invalid_argument(std::string(op) + ": expects a positive " + factor_name + ", got " + std::to_string(factor));
  }
  if (input.dim() < 3) {
    throw std::invalid_argument(std::string(op) + ": expects an input of at least 3 dims [*, C, H, W], got " +
                                std::to_string(input.dim()) + " dims");
  }
}

}  // namespace

Tensor pixel_shuffle(const Tensor& input, int64_t r) {
  check_shuffle(input, r, "pixel_shuffle", "upscale_factor");
  const int64_t nd = input.dim();
  const int64_t c = input.size(nd - 3), h = input.size(nd - 2), w = input.size(nd - 1);
  if (c % (r * r) != 0) {
    throw std::invalid_argument("pixel_shuffle: the channel dim (size(-3) = " + std::to_string(c) +
                                ") must be divisible by upscale_factor^2 = " + std::to_string(r * r));
  }
  const Shape batch(input.sizes().begin(), input.sizes().end() - 3);
  const int64_t b = static_cast<int64_t>(batch.size());
  Shape split = batch;  // [*, C, r, r, H, W]
  split.insert(split.end(), {c / (r * r), r, r, h, w});
  std::vector<int64_t> order(b);
  for (int64_t i = 0; i < b; ++i) order[i] = i;
  order.insert(order.end(), {b, b + 3, b + 1, b + 4, b + 2});  // [*, C, H, r, W, r]
  Shape merged = batch;
  merged.insert(merged.end(), {c / (r * r), h * r, w * r});
  return colony::reshape(colony::permute(colony::reshape(input, split), order), merged);
}

Tensor pixel_unshuffle(const Tensor& input, int64_t r) {
  check_shuffle(input, r, "pixel_unshuffle", "downscale_factor");
  const int64_t nd = input.dim();
  const int64_t c = input.size(nd - 3), h = input.size(nd - 2), w = input.size(nd - 1);
  if (h % r != 0 || w % r != 0) {
    throw std::invalid_argument("pixel_unshuffle: height and width (" + std::to_string(h) + ", " + std::to_string(w) +
                                ") must be divisible by downscale_factor = " + std::to_string(r));
  }
  const Shape batch(input.sizes().begin(), input.sizes().end() - 3);
  const int64_t b = static_cast<int64_t>(batch.size());
  Shape split = batch;  // [*, C, H / r, r, W / r, r]
  split.insert(split.end(), {c, h / r, r, w / r, r});
  std::vector<int64_t> order(b);
  for (int64_t i = 0; i < b; ++i) order[i] = i;
  order.insert(order.end(), {b, b + 2, b + 4, b + 1, b + 3});  // [*, C, r, r, H / r, W / r]
  Shape merged = batch;
  merged.insert(merged.end(), {c * r * r, h / r, w / r});
  return colony::reshape(colony::permute(colony::reshape(input, split), order), merged);
}

// torch's native_channel_shuffle: [N, g, C / g, *] transposed to [N, C / g, g, *], made contiguous.
Tensor channel_shuffle(const Tensor& input, int64_t groups) {
  if (input.dim() <= 2) {
    throw std::invalid_argument("channel_shuffle expects input with > 2 dims, but got input with sizes " +
                                shape_str(input.sizes()));
  }
  if (groups <= 0) {
    throw std::invalid_argument("Number of groups to divide channels in must be positive. Value of groups:" +
                                std::to_string(groups));
  }
  const int64_t c = input.size(1);
  if (c % groups != 0) {
    throw std::invalid_argument("Number of channels must be divisible by groups. Got " + std::to_string(c) +
                                " channels and " + std::to_string(groups) + " groups.");
  }
  Shape split{input.size(0), groups, c / groups};
  split.insert(split.end(), input.sizes().begin() + 2, input.sizes().end());
  return colony::reshape(colony::contiguous(colony::transpose(colony::reshape(input, split), 1, 2)), input.sizes());
}

}  // namespace colony::nn::functional
