// A bad index found by a CUDA kernel, recorded on the device and reported on the host at the next
// synchronization the program asks for, so index checks cost the step no host round trip (a host
// check would need amin/amax and a sync per op). Plain C++: the record's layout, how a kernel
// writes it and the message the host raises are shared by the .cu files and host tests.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/common/macros.h"

namespace colony::kernels {

// The ops that validate indices on the device. 0 means "no error recorded".
enum class CheckedOp : int64_t { None = 0, IndexSelect, IndexAdd, Gather, ScatterAdd, NllLoss, CrossEntropy, Scatter,
                                   CtcLoss, EmbeddingBag };

inline const char* checked_op_name(CheckedOp op) {
  switch (op) {
    case CheckedOp::None: return "none";
    case CheckedOp::IndexSelect: return "index_select";
    case CheckedOp::IndexAdd: return "index_add";
    case CheckedOp::Gather: return "gather";
    case CheckedOp::ScatterAdd: return "scatter_add";
    case CheckedOp::NllLoss: return "nll_loss";
    case CheckedOp::CrossEntropy: return "cross_entropy";
    case CheckedOp::Scatter: return "scatter";
    case CheckedOp::CtcLoss: return "ctc_loss";
    case CheckedOp::EmbeddingBag: return "embedding_bag";
  }
  return "unknown op";
}

// Lives in mapped pinned host memory: a kernel writes it with plain stores, the host reads it
// after a synchronization with no copy. Three aligned 64-bit fields: each store is whole.
struct DeviceErrorRecord {
  int64_t op;     // a CheckedOp
  int64_t index;  // the offending value
  int64_t bound;  // valid values are [0, bound)
};

// Called by a kernel thread that found `index` outside [0, bound). The first op to fail keeps
// the record until the host takes it. Threads of one kernel that fail together may interleave
// their stores; every mix still names this op, its bound and one of the bad values it saw.
COLONY_INLINE void record_bad_index(volatile DeviceErrorRecord* r, CheckedOp op, int64_t index, int64_t bound) {
  if (r->op != 0) return;
  r->index = index;
  r->bound = bound;
  r->op = static_cast<int64_t>(op);
}

COLONY_INLINE bool index_in_range(int64_t index, int64_t bound) { return index >= 0 && index < bound; }

// The message the host raises for a record, worded like the CPU's checks of the same op.
inline std::string device_error_message(const DeviceErrorRecord& r) {
  const auto op = static_cast<CheckedOp>(r.op);
  std::string what;
  if (op == CheckedOp::NllLoss || op == CheckedOp::CrossEntropy || op == CheckedOp::CtcLoss) {
    what = "target " + std::to_string(r.index) + " is out of bounds for " + std::to_string(r.bound) + " classes";
  } else {
    what = "index " + std::to_string(r.index) + " is out of range for a dimension of size " + std::to_string(r.bound);
  }
  return std::string(checked_op_name(op)) + ": " + what +
         " (found on the device by a kernel launched before this synchronization; its results are invalid. "
         "Run with COLONY_CUDA_SYNC=1 to stop at the launching call)";
}

// The recorded error's message, clearing the record for the next one; empty when none.
inline std::string take_device_error(volatile DeviceErrorRecord* r) {
  if (r->op == 0) return {};
  DeviceErrorRecord copy{r->op, r->index, r->bound};
  r->index = 0;
  r->bound = 0;
  r->op = 0;
  return device_error_message(copy);
}

}  // namespace colony::kernels
