// Collectives of a host backend (Gloo) on CUDA tensors: the data goes through pinned host buffers.
// Each rank copies its device tensors to page-locked host copies (waiting for the current stream
// to produce them), the collective runs on those, and wait() copies the results back to the
// device. Slower than NCCL (two PCIe copies, host reduction) but it works where NCCL cannot: several
// ranks sharing one GPU, or a build without NCCL.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "distributed/comm/process_group.h"
#include "tensor/tensor.h"

namespace colony::dist::gloo_detail {

// A pinned host copy of `t` (contiguous, same dtype and shape); blocks until `t` is ready.
Tensor stage_to_host(const Tensor& t);

// A Work whose wait() waits for `inner` and then copies each host result back into its device
// tensor (results[i].first <- results[i].second), once.
std::shared_ptr<Work> copy_back_on_wait(std::shared_ptr<Work> inner, std::vector<std::pair<Tensor, Tensor>> results);

}  // namespace colony::dist::gloo_detail
