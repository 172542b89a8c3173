// Random tensors. Each draw reserves a fresh range of Philox blocks from the generator, then the
// device kernel computes element i from (seed, offset + i): the values are the same on CPU and CUDA
// and for any thread count.
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "kernels/common/philox.h"
#include "tensor/device_backend.h"
#include "tensor/grad_mode.h"
#include "tensor/inplace_check.h"
#include "tensor/op_checks.h"
#include "tensor/raw_ops.h"

namespace colony::raw {
namespace {

Generator& gen_or_default(Generator* gen) { return gen ? *gen : default_generator(); }

// Fills a contiguous floating tensor in place.
void fill_random_contiguous(Tensor& t, bool normal, double a, double b, Generator& gen, const char* op) {
  check_floating(t, op, "tensor");
  int64_t n = t.numel();
  kernels::PhiloxArgs philox = gen.philox_args(kernels::random_blocks_needed(n), t.device());
  backend_for(t.device()).fill_random(t.dtype(), t.data_ptr_raw(), n, normal, a, b, philox);
}

void fill_random(Tensor& t, bool normal, double a, double b, Generator* gen, const char* op) {
  if (t.is_contiguous()) {
    fill_random_contiguous(t, normal, a, b, gen_or_default(gen), op);
  } else {
    Tensor tmp = empty(t.sizes(), TensorOptions(t.dtype()).device(t.device()));
    fill_random_contiguous(tmp, normal, a, b, gen_or_default(gen), op);
    copy_(t, tmp);
  }
  t.storage()->bump_version();
}

}  // namespace

void uniform_(Tensor& t, double from, double to, Generator* gen) {
  if (from > to) {
    throw std::invalid_argument("uniform_: expects from <= to, got from=" + std::to_string(from) +
                                " to=" + std::to_string(to));
  }
  fill_random(t, false, from, to, gen, "uniform_");
}

void normal_(Tensor& t, double mean, double std, Generator* gen) {
  if (std < 0) throw std::invalid_argument("normal_: expects std >= 0, got " + std::to_string(std));
  fill_random(t, true, mean, std, gen, "normal_");
}

Tensor rand(const Shape& shape, const TensorOptions& opts, Generator* gen) {
  Tensor t = empty(shape, opts);
  fill_random(t, false, 0.0, 1.0, gen, "rand");
  return t;
}

Tensor randn(const Shape& shape, const TensorOptions& opts, Generator* gen) {
  Tensor t = empty(shape, opts);
  fill_random(t, true, 0.0, 1.0, gen, "randn");
  return t;
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, const TensorOptions& opts, Generator* gen) {
  if (low >= high) {
    throw std::invalid_argument("randint: expects low < high, got low=" + std::to_string(low) +
                                " high=" + std::to_string(high));
  }
  // floor(low + (high - low) * u) with 53-bit uniforms is exact for ranges below 2^53.
  Tensor u = rand(shape, TensorOptions(kFloat64).device(opts.device()), gen);
  Tensor v = unary(UnaryOp::Floor, add(mul(u, static_cast<double>(high - low)), static_cast<double>(low)));
  return to(v, opts.device(), opts.dtype());
}

Tensor randperm(int64_t n, const TensorOptions& opts, Generator* gen) {
  if (n < 0) throw std::invalid_argument("randperm: n must be non-negative, got " + std::to_string(n));
  // Sorting random keys gives a uniform permutation that depends only on the generator state.
  Tensor keys = rand({n}, TensorOptions(kFloat64), gen);
  const double* k = keys.data_ptr<double>();
  std::vector<int64_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return k[a] < k[b]; });
  return to(from_vector(idx, {n}), opts.device(), opts.dtype());
}

Tensor bernoulli(const Tensor& p, Generator* gen) {
  DType dt = is_floating(p.dtype()) ? p.dtype() : kFloat32;
  Tensor u = rand(p.sizes(), TensorOptions(dt).device(p.device()), gen);
  return to(binary(BinaryOp::Lt, u, p), p.device(), dt);
}

void bernoulli_(Tensor& t, double p, Generator* gen) {
  if (p < 0 || p > 1) throw std::invalid_argument("bernoulli_: expects 0 <= p <= 1, got " + std::to_string(p));
  Tensor u = rand(t.sizes(), TensorOptions(is_floating(t.dtype()) ? t.dtype() : kFloat32).device(t.device()), gen);
  copy_(t, binary(BinaryOp::Lt, u, p));
}

}  // namespace colony::raw

namespace colony {

Tensor& Tensor::uniform_(double from, double to) {
  detail::check_inplace_write(*this, "uniform_");
  raw::uniform_(*this, from, to);
  return *this;
}

Tensor& Tensor::normal_(double mean, double std) {
  detail::check_inplace_write(*this, "normal_");
  raw::normal_(*this, mean, std);
  return *this;
}

Tensor& Tensor::bernoulli_(double p) {
  detail::check_inplace_write(*this, "bernoulli_");
  raw::bernoulli_(*this, p);
  return *this;
}

}  // namespace colony
