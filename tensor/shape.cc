#include "tensor/shape.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace colony {

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<int64_t> try_shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) {
    if (s < 0) return std::nullopt;
    std::optional<int64_t> next = checked_mul(n, s);
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) {
    std::optional<int64_t> next = checked_mul(n, s);
    if (!next) {
      throw std::overflow_error("shape " + shape_str(shape) + " has more elements than int64 can count");
    }
    n = *next;
  }
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    if (i == 0) break;  // the outermost size enters no stride
    std::optional<int64_t> next = checked_mul(s, std::max<int64_t>(shape[i], 1));
    if (!next) {
      throw std::overflow_error("shape " + shape_str(shape) + ": its strides do not fit int64 (with a "
                                "zero-sized dimension the element count is 0, but the other sizes are still "
                                "laid out)");
    }
    s = *next;
  }
  return strides;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw std::invalid_argument(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                                  " cannot be broadcast (dimension " + std::to_string(i) + ": " +
                                  std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  // A 0-d tensor accepts dims 0 and -1, as in PyTorch.
  int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n) {
    throw std::out_of_range(std::string(op) + ": dim " + std::to_string(dim) + " out of range for a " +
                            std::to_string(ndim) + "-D tensor (expected in [" + std::to_string(-n) + ", " +
                            std::to_string(n - 1) + "])");
  }
  return dim < 0 ? dim + n : dim;
}

std::vector<int64_t> wrap_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim, op);
    if (std::find(out.begin(), out.end(), w) != out.end()) {
      throw std::invalid_argument(std::string(op) + ": dim " + std::to_string(w) + " appears more than once");
    }
    out.push_back(w);
  }
  return out;
}

}  // namespace colony
