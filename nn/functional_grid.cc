// F::grid_sample over the differentiable grid_sampler of autograd/nn_ops.h (torch's string checks
// here, the tensor checks in ops/grid_sample_ops.cc), and F::affine_grid, composed as torch's
// affine_grid_generator is: a base grid of the output pixels' own coordinates times theta^T, so
// its gradient w.r.t. theta is the matrix product's.
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/autograd.h"
#include "autograd/nn_ops.h"
#include "nn/functional.h"

namespace colony::nn::functional {
namespace {

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// torch's linspace_from_neg_one, in T as torch computes it: linspace(-1, 1, n) (each half from its
// own end, as torch's kernel), times (n - 1) / n without align_corners; 0 for a single step.
template <typename T>
std::vector<double> positions(int64_t n, bool align_corners) {
  if (n <= 1) return std::vector<double>(static_cast<size_t>(n), 0.0);
  std::vector<double> v(static_cast<size_t>(n));
  const T step = (T(1) - T(-1)) / static_cast<T>(n - 1);
  const int64_t half = n / 2;
  for (int64_t i = 0; i < n; ++i) {
    T x = i < half ? T(-1) + step * static_cast<T>(i) : T(1) - step * static_cast<T>(n - 1 - i);
    if (!align_corners) x = x * static_cast<T>(n - 1) / static_cast<T>(n);
    v[static_cast<size_t>(i)] = static_cast<double>(x);
  }
  return v;
}

}  // namespace

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options) {
  const std::string& m = options.mode();
  const std::string& p = options.padding_mode();
  kernels::GridSampleMode mode;
  if (m == "bilinear") {
    mode = kernels::GridSampleMode::Bilinear;
  } else if (m == "nearest") {
    mode = kernels::GridSampleMode::Nearest;
  } else if (m == "bicubic") {
    mode = kernels::GridSampleMode::Bicubic;
  } else {
    throw std::invalid_argument(
        "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '" + m + "'");
  }
  kernels::GridSamplePadding padding;
  if (p == "zeros") {
    padding = kernels::GridSamplePadding::Zeros;
  } else if (p == "border") {
    padding = kernels::GridSamplePadding::Border;
  } else if (p == "reflection") {
    padding = kernels::GridSamplePadding::Reflection;
  } else {
    throw std::invalid_argument(
        "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '" +
        p + "'");
  }
  return colony::grid_sampler(input, grid, mode, padding, options.align_corners().value_or(false));
}

Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size, bool align_corners) {
  if (!theta.defined()) throw std::invalid_argument("affine_grid: expected a defined theta");
  if (!is_floating(theta.dtype())) {
    throw std::invalid_argument(std::string("Expected theta to have floating point type, but got ") +
                                dtype_name(theta.dtype()));
  }
  const size_t nd = size.size();
  if (nd == 4 || nd == 5) {
    const int64_t rows = nd == 4 ? 2 : 3;
    if (theta.dim() != 3 || theta.size(1) != rows || theta.size(2) != rows + 1) {
      throw std::invalid_argument(std::string("Expected a batch of ") + (nd == 4 ? "2D" : "3D") +
                                  " affine matrices of shape Nx" + std::to_string(rows) + "x" +
                                  std::to_string(rows + 1) + " for size " + list_str(size) + ". Got " +
                                  shape_str(theta.sizes()) + ".");
    }
  } else {
    throw std::invalid_argument(
        "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size " +
        list_str(size) + ".");
  }
  bool unit = false, empty = false;
  for (size_t d = 2; d < nd; ++d) unit = unit || size[d] == 1;
  for (int64_t s : size) empty = empty || s <= 0;
  // torch checks for an empty size only when align_corners with a unit spatial size did not warn.
  if (!(align_corners && unit) && empty) {
    throw std::invalid_argument("Expected non-zero, positive output size. Got " + list_str(size));
  }
  if (theta.size(0) != size[0]) {
    throw std::invalid_argument("affine_grid: expected theta's batch size " + std::to_string(theta.size(0)) +
                                " to be size[0] = " + std::to_string(size[0]));
  }
  // base [1, points, dims + 1]: (x, y[, z], 1) of every output point, x fastest.
  const int64_t dims = static_cast<int64_t>(nd) - 2;
  std::vector<std::vector<double>> axis;  // x, y[, z]
  for (int64_t a = 0; a < dims; ++a) {
    const int64_t n = size[nd - 1 - a];
    axis.push_back(theta.dtype() == kFloat64 ? positions<double>(n, align_corners) : positions<float>(n, align_corners));
  }
  const int64_t w = size[nd - 1], h = size[nd - 2], d = dims == 3 ? size[2] : 1;
  std::vector<double> base;
  base.reserve(static_cast<size_t>(d * h * w * (dims + 1)));
  for (int64_t z = 0; z < d; ++z) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        base.push_back(axis[0][static_cast<size_t>(x)]);
        base.push_back(axis[1][static_cast<size_t>(y)]);
        if (dims == 3) base.push_back(axis[2][static_cast<size_t>(z)]);
        base.push_back(1.0);
      }
    }
  }
  const Tensor base_grid =
      raw::to(raw::from_vector<double>(base, {1, d * h * w, dims + 1}), theta.device(), theta.dtype());
  // torch's affine_grid_generator is not on its autocast lists, and the product inside it is not
  // autocast either: theta's dtype throughout.
  AutocastGuard keep_dtype(theta.device().type, /*enabled=*/false);
  Tensor grid = colony::matmul(base_grid, colony::transpose(theta, 1, 2));  // [N, points, dims]
  Shape shape{size[0]};
  if (dims == 3) shape.push_back(d);
  shape.insert(shape.end(), {h, w, dims});
  return colony::reshape(grid, shape);
}

}  // namespace colony::nn::functional
