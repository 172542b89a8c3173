// How F::interpolate resamples a weighted dim (nn/functional_upsample.cc), and a scoped override
// of the choice for tests and benchmarks, so every path runs every case.
#pragma once

namespace colony::nn::functional {

enum class ResamplePath {
  automatic,  // the faster one for the shape (functional_upsample.cc's kMatrixMaxInput)
  matrix,     // a product with the dense [out, in] interpolation matrix
  kernel,     // the one-pass resample kernel (kernels/common/resample.h)
};

// While alive, F::interpolate on this thread takes `path` for every weighted dim; restores the
// previous choice when destroyed.
class ForceResamplePath {
 public:
  explicit ForceResamplePath(ResamplePath path);
  ~ForceResamplePath();
  ForceResamplePath(const ForceResamplePath&) = delete;
  ForceResamplePath& operator=(const ForceResamplePath&) = delete;

 private:
  ResamplePath previous_;
};

}  // namespace colony::nn::functional
