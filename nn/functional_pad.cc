// F::pad and F::normalize, composed of differentiable ops (cat, narrow, index_select, norm), so
// both devices and the gradients come with them.
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

// The source position of each output position -lo .. size + hi - 1 of one dim, by mode.
Tensor source_index(const std::string& mode, int64_t size, int64_t lo, int64_t hi, Device device) {
  std::vector<int64_t> idx;
  idx.reserve(size + lo + hi);
  for (int64_t i = -lo; i < size + hi; ++i) {
    int64_t j = i;
    if (mode == "reflect") {
      j = i < 0 ? -i : (i >= size ? 2 * (size - 1) - i : i);
    } else if (mode == "replicate") {
      j = std::min(std::max<int64_t>(i, 0), size - 1);
    } else {  // circular
      j = ((i % size) + size) % size;
    }
    idx.push_back(j);
  }
  return raw::from_vector<int64_t>(idx, {}, TensorOptions(kInt64).device(device));
}

}  // namespace

Tensor pad(const Tensor& input, const PadFuncOptions& options) {
  const std::vector<int64_t>& p = options.pad();
  const std::string& mode = options.mode();
  const int64_t ndim = input.dim();
  if (p.size() % 2 != 0) fail("the padding must have an even length ((before, after) pairs), got " + shape_str(p));
  const int64_t padded = static_cast<int64_t>(p.size()) / 2;
  if (padded > ndim) {
    fail("the padding " + shape_str(p) + " pads " + std::to_string(padded) + " dims of an input with only " +
         std::to_string(ndim) + " (" + shape_str(input.sizes()) + ")");
  }
  const bool constant = mode == "constant";
  if (!constant && mode != "reflect" && mode != "replicate" && mode != "circular") {
    fail("mode must be \"constant\", \"reflect\", \"replicate\" or \"circular\", got \"" + mode + "\"");
  }
  if (!constant) {
    if (padded < 1 || padded > 3 || (ndim != padded + 1 && ndim != padded + 2)) {
      fail("mode \"" + mode + "\" pads the last 1 to 3 dims of an input with 1 or 2 more dims (e.g. [C, W] or "
           "[N, C, W] for a padding of 2 values), got a padding of " + std::to_string(p.size()) + " values for " +
           shape_str(input.sizes()));
    }
    if (options.value() != 0.0) fail("a fill value is only used by mode \"constant\", got mode \"" + mode + "\"");
  }
  Tensor x = input;
  for (int64_t i = 0; i < padded; ++i) {
    const int64_t dim = ndim - 1 - i;
    const int64_t lo = p[2 * i], hi = p[2 * i + 1];
    if (constant) {
      x = pad_constant(x, dim, lo, hi, options.value());
      continue;
    }
    const int64_t size = x.size(dim);
    const std::string where = "dim " + std::to_string(dim) + " of size " + std::to_string(size);
    if (lo < 0 || hi < 0) fail("mode \"" + mode + "\" needs padding >= 0, got (" + std::to_string(lo) + ", " +
                                std::to_string(hi) + ") for " + where);
    if (lo == 0 && hi == 0) continue;
    if (size == 0) fail("mode \"" + mode + "\" cannot pad the empty " + where);
    if (mode == "reflect" && (lo >= size || hi >= size)) {
      fail("mode \"reflect\" needs each padding < the dim's size, got (" + std::to_string(lo) + ", " +
           std::to_string(hi) + ") for " + where);
    }
    if (mode == "circular" && (lo > size || hi > size)) {
      fail("mode \"circular\" needs each padding <= the dim's size, got (" + std::to_string(lo) + ", " +
           std::to_string(hi) + ") for " + where);
    }
    x = colony::index_select(x, dim, source_index(mode, size, lo, hi, x.device()));
  }
  // torch returns a new tensor even when nothing is padded.
  return x.storage().get() == input.storage().get() ? colony::clone(x) : x;
}

Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options) {
  Tensor n = colony::norm(input, options.p(), {options.dim()}, /*keepdim=*/true);
  return colony::div(input, colony::clamp(n, options.eps(), std::nullopt).expand_as(input));
}

}  // namespace colony::nn::functional
