#include "runtime/cuda/cudnn_policy.h"

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <stdexcept>
#include <string>

namespace colony::kernels::cuda {

ConvFailure classify_conv_failure(int cudnn_status) {
  switch (cudnn_status / 1000 * 1000) {  // CUDNN_STATUS_CATEGORY
    case kCudnnStatusNotSupported: return ConvFailure::kUnsupported;
    case kCudnnStatusBadParam: return ConvFailure::kBadParam;
    default: return ConvFailure::kFatal;
  }
}

void forget_candidate(ConvAlgoCache& cache, const ConvAlgoKey& key, int algo, int math) {
  auto it = cache.find(key);
  if (it == cache.end()) return;
  auto& list = it->second;
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const ConvCandidate& c) { return c.algo == algo && c.math == math; }),
             list.end());
  if (list.empty()) cache.erase(it);
}

namespace {

// "[64, 128, 512, 512] (2147483648 elements)" when that is more than cuDNN holds, else "".
std::string too_large(std::initializer_list<int64_t> dims) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : dims) {
    if (d != 0 && n > INT64_MAX / d) overflow = true;
    n = overflow ? INT64_MAX : n * d;
  }
  if (n <= INT_MAX) return "";
  std::string shape = "[";
  for (int64_t d : dims) shape += (shape.size() > 1 ? ", " : "") + std::to_string(d);
  return shape + "] (" + (overflow ? std::string("over 2^63") : std::to_string(n)) + " elements)";
}

}  // namespace

namespace {

struct Operand {
  const char* what;
  std::string shape;
};

void check_operands(const char* op, std::initializer_list<Operand> operands) {
  for (const Operand& o : operands)
    if (!o.shape.empty())
      throw std::invalid_argument(std::string(op) + ": the " + o.what + " " + o.shape +
                                  " is larger than the 2147483647 (2^31 - 1) elements cuDNN's tensor descriptors "
                                  "hold; split the batch into smaller ones");
}

}  // namespace

void check_cudnn_element_limit(const Conv2dGeometry& g) {
  check_operands("conv2d", {
                               {"input", too_large({g.batch, g.in_channels, g.in_h, g.in_w})},
                               {"output", too_large({g.batch, g.out_channels, g.out_h, g.out_w})},
                               {"weight", too_large({g.out_channels, g.group_in_channels(), g.kernel_h, g.kernel_w})},
                           });
}

void check_cudnn_element_limit(const Conv3dGeometry& g) {
  check_operands("conv3d", {
                               {"input", too_large({g.batch, g.in_channels, g.in_d, g.in_h, g.in_w})},
                               {"output", too_large({g.batch, g.out_channels, g.out_d, g.out_h, g.out_w})},
                               {"weight", too_large({g.out_channels, g.group_in_channels(), g.kernel_d, g.kernel_h,
                                                     g.kernel_w})},
                           });
}

}  // namespace colony::kernels::cuda
