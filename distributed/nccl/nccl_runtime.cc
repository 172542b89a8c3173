#include "distributed/nccl/nccl_runtime.h"

namespace colony::dist::nccl_detail {

bool nccl_can_move(DType dtype) { return dtype == kBool || nccl_can_reduce(dtype); }

bool nccl_can_reduce(DType dtype) {
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
