// Random tensors. Each draw reserves a fresh range of Philox blocks from the generator, then the
// device kernel computes element i from (seed, offset + i): the values are the same on CPU and CUDA
// and for any thread count.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <stdexcept>

#include "kernels/common/multinomial.h"
#include "kernels/common/philox.h"
#include "kernels/common/random.h"
#include "tensor/grad_mode.h"
#include "ops/inplace_check.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

Generator& gen_or_default(Generator* gen) { return gen ? *gen : default_generator(); }

// Fills a contiguous floating tensor in place.
void fill_random_contiguous(Tensor& t, bool normal, double a, double b, Generator& gen, const char* op) {
  check_floating(t, op, "tensor");
  int64_t n = t.numel();
  kernels::PhiloxArgs philox = gen.philox_args(kernels::random_blocks_needed(n), t.device());
  run_kernel<kernels::FillRandom>(t.device(), t.dtype(), t.data_ptr_raw(), n, normal, a, b, philox);
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

namespace {

// The continuous distributions fill floating tensors only, with torch's words.
void check_continuous(const Tensor& t, const char* distribution) {
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string(distribution) +
                                " distribution is a continuous probability distribution. dtype must be a floating "
                                "point but you specified " + dtype_name(t.dtype()));
  }
}

// Uniforms in [0, 1) with 53 bits, in float64 on t's device: the draw the fills below transform
// (in float64, rounded once into t's dtype), from the same Philox stream as uniform_.
Tensor uniform_draw(const Tensor& t, Generator* gen) {
  return rand(t.sizes(), TensorOptions(kFloat64).device(t.device()), gen);
}

void write_draw(Tensor& t, const Tensor& values) {
  copy_(t, values);
  t.storage()->bump_version();
}

constexpr double kPi = 3.14159265358979323846;

// A parameter in an error, as Python prints a number (0, 1.5, -1).
std::string format_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

void exponential_(Tensor& t, double lambd, Generator* gen) {
  check_continuous(t, "Exponential");
  if (!(lambd > 0)) {
    throw std::invalid_argument("exponential_ expects lambda > 0.0, but found lambda=" + format_number(lambd));
  }
  // -log(1 - u) / lambd: u in [0, 1), so 1 - u in (0, 1] and every sample finite, >= 0.
  Tensor u = uniform_draw(t, gen);
  write_draw(t, binary(BinaryOp::Div, neg(unary(UnaryOp::Log1p, neg(u))), lambd));
}

void cauchy_(Tensor& t, double median, double sigma, Generator* gen) {
  check_continuous(t, "Cauchy");
  if (!(sigma > 0)) {
    throw std::invalid_argument("cauchy_ expects sigma > 0.0, but found sigma=" + format_number(sigma));
  }
  // median + sigma tan(pi (u - 1/2)), the inverse of the Cauchy CDF, as ATen's.
  Tensor u = uniform_draw(t, gen);
  write_draw(t, add(mul(unary(UnaryOp::Tan, mul(add(u, -0.5), kPi)), sigma), median));
}

void log_normal_(Tensor& t, double mean, double std, Generator* gen) {
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string("log_normal_: not implemented for ") + dtype_name(t.dtype()) +
                                " tensors (a floating-point tensor is expected), as in PyTorch");
  }
  if (!(std > 0)) throw std::invalid_argument("log_normal_ expects std > 0.0, but found std=" + format_number(std));
  Tensor z = randn(t.sizes(), TensorOptions(kFloat64).device(t.device()), gen);
  write_draw(t, exp(add(mul(z, std), mean)));
}

void geometric_(Tensor& t, double p, Generator* gen) {
  if (t.dtype() == kBool) throw std::invalid_argument("geometric_: not implemented for bool tensors, as in PyTorch");
  if (!(p > 0 && p < 1)) {
    throw std::invalid_argument("geometric_ expects p to be in (0, 1), but got p=" + format_number(p));
  }
  // The number of Bernoulli(p) trials up to the first success: ceil(log(1 - u) / log(1 - p)), at
  // least 1 (u = 0 would give 0).
  Tensor u = uniform_draw(t, gen);
  Tensor trials = unary(UnaryOp::Ceil, binary(BinaryOp::Div, unary(UnaryOp::Log1p, neg(u)), std::log1p(-p)));
  write_draw(t, binary(BinaryOp::Maximum, trials, 1.0));
}

void random_(Tensor& t, std::optional<double> from_arg, std::optional<double> to_arg, Generator* gen) {
  // Without bounds: [0, 2^digits] for floating dtypes (every integer they hold exactly), [0, max]
  // for integral ones, as torch's random_().
  double from = from_arg.value_or(0.0), to = 0.0;
  const DType d = t.dtype();
  double lowest = 0, highest = 0;  // the dtype's range of integers
  switch (d) {
    case kBool: lowest = 0; highest = 1; break;
    case kUInt8: lowest = 0; highest = 255; break;
    case kInt32: lowest = -2147483648.0; highest = 2147483647.0; break;
    case kInt64: lowest = -9223372036854775808.0; highest = 9223372036854775807.0; break;
    case kFloat16: lowest = -65504; highest = 65504; break;
    case kBFloat16: lowest = -3.3895313892515355e38; highest = 3.3895313892515355e38; break;
    case kFloat32: lowest = -3.4028234663852886e38; highest = 3.4028234663852886e38; break;
    case kFloat64: lowest = -1.7976931348623157e308; highest = 1.7976931348623157e308; break;
  }
  if (to_arg) {
    to = *to_arg;
  } else {
    const double digits = d == kFloat64 ? 53 : d == kFloat32 ? 24 : d == kFloat16 ? 11 : d == kBFloat16 ? 8 : -1;
    to = digits > 0 ? std::ldexp(1.0, static_cast<int>(digits)) + 1 : highest + 1;
  }
  if (!(from < to)) {
    throw std::invalid_argument("random_ expects 'from' to be less than 'to', but got from=" + format_number(from) +
                                " >= to=" + format_number(to));
  }
  if (from < lowest || from > highest) {
    throw std::invalid_argument(std::string("random_: from is out of bounds for ") + dtype_name(d));
  }
  if (to - 1 < lowest || to - 1 > highest) {
    throw std::invalid_argument(std::string("random_: to - 1 is out of bounds for ") + dtype_name(d));
  }
  // floor(from + (to - from) u), the largest value to - 1 where float64 rounds up: exact for
  // ranges below 2^53 (int64 ranges wider than that are not uniform over every integer).
  // (int64's largest value is 2^63 in float64, which int64 cannot hold: the largest double below it.)
  const double largest = d == kInt64 ? std::min(to - 1, 9223372036854774784.0) : to - 1;
  Tensor u = uniform_draw(t, gen);
  Tensor v = unary(UnaryOp::Floor, add(mul(u, to - from), from));
  write_draw(t, binary(BinaryOp::Minimum, v, largest));
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator* gen) {
  const char* op = "multinomial";
  check_defined(probs, op, "probs");
  if (!is_floating(probs.dtype())) {
    throw std::invalid_argument(std::string(op) + ": expected floating-point weights, got " + dtype_name(probs.dtype()));
  }
  if (probs.dim() != 1 && probs.dim() != 2) {
    throw std::invalid_argument(std::string(op) + ": expected 1-D or 2-D weights, got shape " +
                                shape_str(probs.sizes()));
  }
  if (num_samples <= 0) {
    throw std::invalid_argument(std::string(op) + ": num_samples must be positive, got " + std::to_string(num_samples));
  }
  const int64_t n = probs.size(-1);
  if (n == 0) throw std::invalid_argument(std::string(op) + ": the weights have no categories (last dim of size 0)");
  if (!replacement && num_samples > n) {
    throw std::invalid_argument(std::string(op) + ": cannot sample num_samples=" + std::to_string(num_samples) +
                                " > " + std::to_string(n) + " categories without replacement");
  }
  // The sums and searches run in float32 (float64 for float64 weights), as PyTorch's accumulators.
  const DType compute = probs.dtype() == kFloat64 ? kFloat64 : kFloat32;
  const Device dev = probs.device();
  Tensor p = to(probs.dim() == 1 ? reshape(probs, {1, n}) : probs, dev, compute);
  const int64_t rows = p.size(0);
  Tensor out = empty({rows, num_samples}, TensorOptions(kInt64).device(dev));
  if (rows > 0) {
    // One read of three numbers on the host (a synchronization on CUDA) checks every weight and
    // every row before anything is drawn: the smallest weight (NaN propagates into it), the
    // largest (inf), and the smallest row sum.
    Tensor row_sums = sum(p, {1});
    Tensor stats = to(stack({amin(p), amax(p), amin(row_sums)}), kCPU, kFloat64);
    const double* s = stats.data_ptr<double>();
    if (std::isnan(s[0]) || std::isnan(s[1]) || s[0] < 0 || std::isinf(s[1])) {
      throw std::invalid_argument(std::string(op) + ": the weights contain inf, NaN or a negative value (expected "
                                  "finite, non-negative weights)");
    }
    if (!(s[2] > 0)) {
      int64_t row = argmin(row_sums, 0).item<int64_t>();
      throw std::invalid_argument(std::string(op) + ": row " + std::to_string(row) +
                                  " of the weights sums to zero (expected a positive sum in every row)");
    }
    if (replacement) {
      Tensor cdf = cumsum(p, 1);
      Tensor u = rand({rows, num_samples}, TensorOptions(compute).device(dev), gen);
      run_kernel<kernels::MultinomialSearch>(dev, compute, cdf.data_ptr_raw(), u.data_ptr_raw(), rows, n,
                                             num_samples, out.data_ptr<int64_t>());
    } else {
      // The exponential-race construction PyTorch uses: with q ~ Exp(1) per category, the k
      // largest p / q are a draw of k categories without replacement, each next one in proportion
      // to the weights left. Zero weights get key 0, so they come only after every positive one
      // (as in PyTorch), even where q is 0.
      Tensor u = rand({rows, n}, TensorOptions(compute).device(dev), gen);
      Tensor q = neg(unary(UnaryOp::Log1p, neg(u)));
      Tensor keys = where(binary(BinaryOp::Eq, p, 0.0), scalar_tensor(0.0, TensorOptions(compute).device(dev)), div(p, q));
      out = topk(keys, num_samples, 1, true, true).second;
    }
  }
  return probs.dim() == 1 ? reshape(out, {num_samples}) : out;
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

Tensor& Tensor::exponential_(double lambd) {
  detail::check_inplace_write(*this, "exponential_");
  raw::exponential_(*this, lambd);
  return *this;
}

Tensor& Tensor::cauchy_(double median, double sigma) {
  detail::check_inplace_write(*this, "cauchy_");
  raw::cauchy_(*this, median, sigma);
  return *this;
}

Tensor& Tensor::log_normal_(double mean, double std) {
  detail::check_inplace_write(*this, "log_normal_");
  raw::log_normal_(*this, mean, std);
  return *this;
}

Tensor& Tensor::geometric_(double p) {
  detail::check_inplace_write(*this, "geometric_");
  raw::geometric_(*this, p);
  return *this;
}

Tensor& Tensor::random_(int64_t from, std::optional<int64_t> to) {
  detail::check_inplace_write(*this, "random_");
  raw::random_(*this, static_cast<double>(from),
               to ? std::optional<double>(static_cast<double>(*to)) : std::nullopt);
  return *this;
}

Tensor& Tensor::random_(int64_t to) {
  detail::check_inplace_write(*this, "random_");
  raw::random_(*this, 0.0, static_cast<double>(to));
  return *this;
}

Tensor& Tensor::random_() {
  detail::check_inplace_write(*this, "random_");
  raw::random_(*this, std::nullopt, std::nullopt);
  return *this;
}

}  // namespace colony
