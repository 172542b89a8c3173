// The device-side error record of the index-checking kernels (kernels/common/device_error.h) and
// its host check. Plain C++ types, so code compiled without CUDA headers can include it.
#pragma once

#include "kernels/common/device_error.h"

namespace colony::kernels::cuda {

// The process's one record, in mapped portable pinned memory (every device writes the same host
// page; with unified addressing the host pointer is valid in kernels). Allocated on first use.
DeviceErrorRecord* device_error_record();

// Throws std::runtime_error naming the op and the bad index if a kernel recorded one, and clears
// the record. Costs one host memory read: call it right after a synchronization (the runtime's
// synchronize wrappers do), when every earlier kernel on the synchronized stream has finished.
void check_device_errors();

}  // namespace colony::kernels::cuda
