// F::pad and F::normalize. The constant mode and normalize are composed of differentiable ops (cat,
// narrow, norm); reflect, replicate and circular are one kernel each way (pad_by_mode,
// kernels/common/pad.h): the cat of narrowed, flipped and expanded views they were before ran
// 2-6x torch's time for a replicate or 3-pixel reflect padding (docs/benchmarks.md, "F::pad by one
// kernel").
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "nn/functional.h"

namespace colony::nn::functional {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("pad: " + what); }

// Dim `dim` of x padded by (lo, hi) with `value`; negative amounts remove elements.
Tensor pad_constant(Tensor x, int64_t dim, int64_t lo, int64_t hi, double value) {
  const int64_t size = x.size(dim);
  if (size + lo + hi < 0) {
    fail("the padding (" + std::to_string(lo) + ", " + std::to_string(hi) + ") of dim " + std::to_string(dim) +
         " of size " + std::to_string(size) + " leaves a negative size " + std::to_string(size + lo + hi));
  }
  const int64_t start = lo < 0 ? -lo : 0;
  const int64_t stop = hi < 0 ? size + hi : size;
  x = colony::narrow(x, dim, start, std::max<int64_t>(stop - start, 0));
  if (lo <= 0 && hi <= 0) return x;
  std::vector<Tensor> parts;
  auto filler = [&](int64_t n) {
    Shape s = x.sizes();
    s[dim] = n;
    return full(s, value, TensorOptions(x.dtype()).device(x.device()));
  };
  if (lo > 0) parts.push_back(filler(lo));
  parts.push_back(x);
  if (hi > 0) parts.push_back(filler(hi));
  return colony::cat(parts, dim);
}

std::string pair_str(int64_t lo, int64_t hi) { return "(" + std::to_string(lo) + ", " + std::to_string(hi) + ")"; }

// torch's checks of a "reflect", "replicate" or "circular" padding of the last `padded` dims, in
// its order and words (ATen's reflection_pad / replication_pad shape checks, _pad_circular).
void check_mode_padding(const Tensor& input, const std::vector<int64_t>& p, const std::string& mode) {
  const int64_t ndim = input.dim(), padded = static_cast<int64_t>(p.size()) / 2;
  const bool batched = ndim == padded + 2;
  if (mode == "circular") {
    for (int64_t i = 0; i < padded; ++i) {
      const int64_t dim = ndim - 1 - i, size = input.size(dim), lo = p[2 * i], hi = p[2 * i + 1];
      if (lo > size || hi > size) fail("Padding value causes wrapping around more than once.");
      if (size + lo + hi < 0) fail("Negative padding value is resulting in an empty dimension");
      // torch reads memory it never wrote when a positive padding outgrows what cropping leaves.
      const int64_t core = size - std::max<int64_t>(-lo, 0) - std::max<int64_t>(-hi, 0);
      if ((lo > 0 && lo > core) || (hi > 0 && hi > core)) {
        fail("mode \"circular\": the padding " + pair_str(lo, hi) + " of dim " + std::to_string(dim) + " of size " +
             std::to_string(size) + " wraps around the " + std::to_string(std::max<int64_t>(core, 0)) +
             " elements its negative side leaves more than once");
      }
    }
    return;
  }
  for (int64_t d = batched ? 1 : 0; d < ndim; ++d) {
    if (input.size(d) == 0) {
      fail("Expected " + std::to_string(padded + 1) + "D or " + std::to_string(padded + 2) +
           "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: " +
           shape_str(input.sizes()));
    }
  }
  if (mode == "reflect") {
    for (int64_t i = 0; i < padded; ++i) {
      const int64_t dim = ndim - 1 - i, size = input.size(dim), lo = p[2 * i], hi = p[2 * i + 1];
      if (lo >= size || hi >= size) {
        fail("Argument #" + std::to_string(2 * padded + 2) +
             ": Padding size should be less than the corresponding input dimension, but got: padding " +
             pair_str(lo, hi) + " at dimension " + std::to_string(dim) + " of input " + shape_str(input.sizes()));
      }
    }
  }
  bool empty = false;
  for (int64_t i = 0; i < padded; ++i) empty = empty || input.size(ndim - 1 - i) + p[2 * i] + p[2 * i + 1] < 1;
  if (!empty) return;
  static const char* const kLetters[] = {"D", "H", "W"};
  std::string in, out;
  for (int64_t d = ndim - padded; d < ndim; ++d) {
    const int64_t i = ndim - 1 - d;
    const std::string letter = kLetters[3 - padded + (d - (ndim - padded))];
    in += (in.empty() ? "" : ", ") + letter + ": " + std::to_string(input.size(d));
    out += (out.empty() ? "" : " ") + letter + ": " + std::to_string(input.size(d) + p[2 * i] + p[2 * i + 1]);
  }
  if (padded == 1) fail("input (" + in + ") is too small. Calculated output " + out);
  fail("Calculated output " + out + " must be >= 1 in every dimension (input " + in + ")");
}

}  // namespace

Tensor pad(const Tensor& input, const PadFuncOptions& options) {
  const std::vector<int64_t>& p = options.pad();
  const std::string& mode = options.mode();
  const int64_t ndim = input.dim();
  if (p.size() % 2 != 0) fail("Padding length must be divisible by 2, got " + shape_str(p));
  const int64_t padded = static_cast<int64_t>(p.size()) / 2;
  if (padded > ndim) {
    fail("Padding length should be less than or equal to two times the input dimension but got padding length " +
         std::to_string(p.size()) + " and input of dimension " + std::to_string(ndim));
  }
  const bool constant = mode == "constant";
  if (!constant && mode != "reflect" && mode != "replicate" && mode != "circular") {
    fail("mode must be \"constant\", \"reflect\", \"replicate\" or \"circular\", got \"" + mode + "\"");
  }
  if (!constant) {
    if (options.value() != 0.0) fail("Padding mode \"" + mode + "\" doesn't take in value argument");
    if (padded < 1 || padded > 3 || (ndim != padded + 1 && ndim != padded + 2)) {
      fail("Padding size " + std::to_string(p.size()) + " is not supported for " + std::to_string(ndim) +
           "D input tensor; mode \"" + mode + "\" pads the last 1 to 3 dims of an input with 1 or 2 more dims: 2 "
           "values for a 2D or 3D input, 4 for 3D or 4D, 6 for 4D or 5D");
    }
    check_mode_padding(input, p, mode);
  }
  if (!constant) {
    const kernels::PadMode m = mode == "reflect"     ? kernels::PadMode::Reflect
                               : mode == "replicate" ? kernels::PadMode::Replicate
                                                     : kernels::PadMode::Circular;
    return colony::pad_by_mode(input, m, p);
  }
  Tensor x = input;
  for (int64_t i = 0; i < padded; ++i) x = pad_constant(x, ndim - 1 - i, p[2 * i], p[2 * i + 1], options.value());
  // torch returns a new tensor even when nothing is padded.
  return x.storage().get() == input.storage().get() ? colony::clone(x) : x;
}

Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options) {
  Tensor n = colony::norm(input, options.p(), {options.dim()}, /*keepdim=*/true);
  return colony::div(input, colony::clamp(n, options.eps(), std::nullopt).expand_as(input));
}

}  // namespace colony::nn::functional
