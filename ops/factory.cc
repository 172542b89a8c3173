// Tensor creation: allocation on the requested device and the fill-value factories.
#include <cmath>
#include <cstdint>
#include <optional>
#include <cstring>
#include <stdexcept>

#include "runtime/caching_allocator.h"
#include "runtime/cuda.h"
#include "ops/raw_ops.h"

namespace colony::raw {
namespace {

Allocator* allocator_for(const TensorOptions& opts) {
  Device d = opts.device();
  if (d.is_cuda()) {
    cuda::check_device(d.index, "empty(" + d.str() + ")");
    return cuda_allocator(d.index);
  }
  return opts.pinned_memory() ? pinned_allocator() : cpu_allocator();
}

void check_shape(const Shape& shape, const char* op) {
  for (int64_t s : shape) {
    if (s < 0) throw std::invalid_argument(std::string(op) + ": negative dimension in shape " + shape_str(shape));
  }
  if (!try_shape_numel(shape)) {
    throw std::overflow_error(std::string(op) + ": shape " + shape_str(shape) + " has more elements than int64 can count");
  }
}

Tensor finish(Tensor t, const TensorOptions& opts) {
  if (opts.requires_grad()) t.requires_grad_(true);
  return t;
}

// Builds on the CPU, then moves: the small factories below are not worth device kernels.
Tensor to_options(Tensor cpu_tensor, const TensorOptions& opts) {
  return finish(to(cpu_tensor, opts.device(), opts.dtype()), opts);
}

}  // namespace

Tensor empty_strided(const Shape& shape, const Shape& strides, const TensorOptions& opts) {
  check_shape(shape, "empty_strided");
  if (shape.size() != strides.size()) {
    throw std::invalid_argument("empty_strided: shape " + shape_str(shape) + " and strides " + shape_str(strides) +
                                " differ in length");
  }
  // Elements from the first to one past the last addressed element, and its bytes. Checked: a shape
  // from a file can claim [2^62], whose byte count would wrap around to a 0-byte allocation.
  std::optional<int64_t> span = 1;
  for (size_t i = 0; i < shape.size() && span; ++i) {
    if (shape[i] == 0) {
      span = 0;
      break;
    }
    std::optional<int64_t> reach = strides[i] < 0 ? std::nullopt : checked_mul(shape[i] - 1, strides[i]);
    span = reach && *reach <= INT64_MAX - *span ? std::optional<int64_t>(*span + *reach) : std::nullopt;
  }
  std::optional<int64_t> bytes = span ? checked_mul(*span, element_size(opts.dtype())) : std::nullopt;
  if (!bytes) {
    throw std::overflow_error("empty_strided: shape " + shape_str(shape) + " with strides " + shape_str(strides) +
                              " spans more bytes than int64 can count (a negative stride or a corrupt size?)");
  }
  auto storage = std::make_shared<StorageImpl>(static_cast<size_t>(*bytes), allocator_for(opts));
  Tensor t(std::make_shared<TensorImpl>(std::move(storage), shape, strides, 0, opts.dtype()));
  return finish(t, opts);
}

Tensor empty(const Shape& shape, const TensorOptions& opts) {
  check_shape(shape, "empty");
  return empty_strided(shape, contiguous_strides(shape), opts);
}

Tensor full(const Shape& shape, double value, const TensorOptions& opts) {
  Tensor t = empty(shape, TensorOptions(opts).requires_grad(false));
  fill_(t, value);
  return finish(t, opts);
}

Tensor zeros(const Shape& shape, const TensorOptions& opts) { return full(shape, 0.0, opts); }
Tensor ones(const Shape& shape, const TensorOptions& opts) { return full(shape, 1.0, opts); }

static TensorOptions like(const Tensor& t) { return TensorOptions(t.dtype()).device(t.device()); }
Tensor empty_like(const Tensor& t) { return empty(t.sizes(), like(t)); }
Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), like(t)); }
Tensor ones_like(const Tensor& t) { return ones(t.sizes(), like(t)); }
Tensor full_like(const Tensor& t, double value) { return full(t.sizes(), value, like(t)); }
Tensor scalar_tensor(double value, const TensorOptions& opts) { return full({}, value, opts); }

Tensor arange(double start, double end, double step, std::optional<TensorOptions> opts) {
  if (step == 0) throw std::invalid_argument("arange: step must be nonzero");
  if ((end - start) / step < 0) {
    throw std::invalid_argument("arange: upper bound and larger bound inconsistent with step sign (start " +
                                std::to_string(start) + ", end " + std::to_string(end) + ", step " +
                                std::to_string(step) + ")");
  }
  int64_t n = static_cast<int64_t>(std::ceil((end - start) / step));
  bool whole = start == std::floor(start) && end == std::floor(end) && step == std::floor(step);
  TensorOptions o = opts ? *opts : TensorOptions(whole ? kInt64 : default_float_dtype());
  Tensor cpu = empty({n}, TensorOptions(kFloat64));
  double* p = cpu.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) p[i] = start + static_cast<double>(i) * step;
  return to_options(cpu, o);
}

Tensor arange(double end, std::optional<TensorOptions> opts) { return arange(0.0, end, 1.0, opts); }

Tensor linspace(double start, double end, int64_t steps, const TensorOptions& opts) {
  if (steps < 0) throw std::invalid_argument("linspace: number of steps must be non-negative, got " + std::to_string(steps));
  Tensor cpu = empty({steps}, TensorOptions(kFloat64));
  double* p = cpu.data_ptr<double>();
  double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  // Fill symmetrically from both ends, as PyTorch does, so the last value is exactly `end`.
  // A single step is `start`, as in PyTorch.
  int64_t half = steps == 1 ? 1 : steps / 2;
  for (int64_t i = 0; i < steps; ++i) {
    p[i] = i < half ? start + step * static_cast<double>(i) : end - step * static_cast<double>(steps - 1 - i);
  }
  return to_options(cpu, opts);
}

Tensor eye(int64_t n, int64_t m, const TensorOptions& opts) {
  if (m < 0) m = n;
  if (n < 0) throw std::invalid_argument("eye: n must be non-negative, got " + std::to_string(n));
  Tensor cpu = zeros({n, m}, TensorOptions(kFloat64));
  double* p = cpu.data_ptr<double>();
  for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = 1.0;
  return to_options(cpu, opts);
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, std::optional<TensorOptions> opts) {
  Shape s = shape.empty() ? Shape{static_cast<int64_t>(values.size())} : shape;
  if (shape_numel(s) != static_cast<int64_t>(values.size())) {
    throw std::invalid_argument("from_vector: shape " + shape_str(s) + " holds " + std::to_string(shape_numel(s)) +
                                " elements, got " + std::to_string(values.size()) + " values");
  }
  using Stored = std::conditional_t<std::is_same_v<T, int>, int32_t, T>;
  Tensor cpu = empty(s, TensorOptions(dtype_of<Stored>::value));
  Stored* p = cpu.data_ptr<Stored>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<Stored>(values[i]);
  return to_options(cpu, opts ? *opts : TensorOptions(dtype_of<Stored>::value));
}

template Tensor from_vector<float>(const std::vector<float>&, const Shape&, std::optional<TensorOptions>);
template Tensor from_vector<double>(const std::vector<double>&, const Shape&, std::optional<TensorOptions>);
template Tensor from_vector<int64_t>(const std::vector<int64_t>&, const Shape&, std::optional<TensorOptions>);
template Tensor from_vector<int32_t>(const std::vector<int32_t>&, const Shape&, std::optional<TensorOptions>);
template Tensor from_vector<uint8_t>(const std::vector<uint8_t>&, const Shape&, std::optional<TensorOptions>);
template Tensor from_vector<bool>(const std::vector<bool>&, const Shape&, std::optional<TensorOptions>);

Tensor tensor(std::initializer_list<double> values, const TensorOptions& opts) {
  Tensor cpu = empty({static_cast<int64_t>(values.size())}, TensorOptions(kFloat64));
  std::copy(values.begin(), values.end(), cpu.data_ptr<double>());
  return to_options(cpu, opts);
}

Tensor tensor(std::initializer_list<std::initializer_list<double>> rows, const TensorOptions& opts) {
  int64_t r = static_cast<int64_t>(rows.size());
  int64_t c = r ? static_cast<int64_t>(rows.begin()->size()) : 0;
  Tensor cpu = empty({r, c}, TensorOptions(kFloat64));
  double* p = cpu.data_ptr<double>();
  int64_t i = 0;
  for (const auto& row : rows) {
    if (static_cast<int64_t>(row.size()) != c) {
      throw std::invalid_argument("tensor: rows have different lengths (" + std::to_string(c) + " and " +
                                  std::to_string(row.size()) + ")");
    }
    for (double v : row) p[i++] = v;
  }
  return to_options(cpu, opts);
}

Tensor from_blob(void* data, const Shape& shape, const Shape& strides, DType dtype, Device device,
                 std::function<void(void*)> deleter) {
  check_shape(shape, "from_blob");
  int64_t span = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) {
      span = 0;
      break;
    }
    span += (shape[i] - 1) * strides[i];
  }
  auto storage = std::make_shared<StorageImpl>(data, static_cast<size_t>(span * element_size(dtype)), device,
                                               std::move(deleter));
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), shape, strides, 0, dtype));
}

Tensor from_blob(void* data, const Shape& shape, DType dtype, Device device, std::function<void(void*)> deleter) {
  return from_blob(data, shape, contiguous_strides(shape), dtype, device, std::move(deleter));
}

}  // namespace colony::raw
