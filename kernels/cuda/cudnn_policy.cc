#include "kernels/cuda/cudnn_policy.h"

#include <algorithm>

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

}  // namespace colony::kernels::cuda
