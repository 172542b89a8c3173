#include "distributed/nccl/nccl_runtime.h"

namespace colony::dist::nccl_detail {

bool nccl_supports(DType dtype) {
  switch (dtype) {
    case kFloat32:
    case kFloat64:
    case kFloat16:
    case kBFloat16:
    case kInt32:
    case kInt64:
    case kUInt8:
      return true;
    default:
      return false;
  }
}

#ifndef COLONY_WITH_CUDA
std::shared_ptr<NcclRuntime> real_nccl_runtime() { return nullptr; }
#endif

}  // namespace colony::dist::nccl_detail
