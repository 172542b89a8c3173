// The parts of the cuDNN convolution (cudnn_conv.cc) that need no GPU, in plain C++ so that they
// are tested on any host: what a failed run of one algorithm means for the others, the per-shape
// algorithm cache's bookkeeping, and the size limit of cuDNN's 4-d and 5-d descriptors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "kernels/common/conv_geometry.h"

namespace colony::kernels::cuda {

// cuDNN 9 reports a category and a specific error in one cudnnStatus_t: CUDNN_STATUS_CATEGORY
// (status / 1000 * 1000) is e.g. CUDNN_STATUS_NOT_SUPPORTED for CUDNN_STATUS_NOT_SUPPORTED_SHAPE.
// These are the two categories' values (cudnn_conv.cc checks them against cudnn_graph.h).
constexpr int kCudnnStatusBadParam = 2000;
constexpr int kCudnnStatusNotSupported = 3000;

// What a failed cudnnConvolution* run of one candidate algorithm means.
enum class ConvFailure {
  // NOT_SUPPORTED and its sub-codes (_SHAPE 3002, _SHARED_MEMORY_INSUFFICIENT 3010, ...): this
  // algorithm cannot run this shape on this device. Try the next, and drop it from the shape's list.
  kUnsupported,
  // BAD_PARAM and its sub-codes (_MISALIGNED_POINTER 2003, ...): it does not suit this call's
  // operands, which the next call may not share. Try the next, keep it for later calls.
  kBadParam,
  // Anything else (an execution failure, an internal error): no other algorithm will fare better.
  kFatal,
};
ConvFailure classify_conv_failure(int cudnn_status);

// One candidate of a shape's list: a cuDNN algorithm enum value, the cudnnMathType_t it runs with
// (cuDNN may list one algorithm once per math type), and the workspace bytes it needs.
struct ConvCandidate {
  int algo;
  int math;
  size_t workspace;
};
using ConvAlgoKey = std::vector<int64_t>;
using ConvAlgoCache = std::map<ConvAlgoKey, std::vector<ConvCandidate>>;

// Drops the candidate (algo, math) from `key`'s list. A list left empty goes with its key, so that
// the next call chooses again (and, if cuDNN offers nothing, says so) instead of finding nothing.
void forget_candidate(ConvAlgoCache& cache, const ConvAlgoKey& key, int algo, int math);

// cuDNN's 4-d tensor and filter descriptors hold at most 2^31 - 1 elements in all. Throws
// std::invalid_argument naming the operand, its shape and the limit when x, y or w of `g` holds
// more: a 64 x 128 x 512 x 512 input has 2^31.
void check_cudnn_element_limit(const Conv2dGeometry& g);
// The same for the 5-d descriptors of a 3-D convolution ("conv3d: the input [...] is larger ...").
void check_cudnn_element_limit(const Conv3dGeometry& g);

}  // namespace colony::kernels::cuda
