// The cuDNN convolution's host-side policy (runtime/cuda/cudnn_policy.h): which failures move on to
// the next algorithm, the algorithm cache's bookkeeping, and the descriptors' element limit.
#include "runtime/cuda/cudnn_policy.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace colony::kernels::cuda {
namespace {

// cuDNN 9 returns sub-codes of a category; comparing with the category's own value missed them,
// and conv2d threw although a later algorithm would have run.
TEST(CudnnPolicy, EveryNotSupportedOrBadParamSubCodeMovesOnToTheNextAlgorithm) {
  for (int status : {3000, 3002, 3010, 3014})  // NOT_SUPPORTED, _SHAPE, _SHARED_MEMORY_INSUFFICIENT, ...
    EXPECT_EQ(classify_conv_failure(status), ConvFailure::kUnsupported) << status;
  for (int status : {2000, 2003, 2008})  // BAD_PARAM, _MISALIGNED_POINTER, _SHAPE_MISMATCH
    EXPECT_EQ(classify_conv_failure(status), ConvFailure::kBadParam) << status;
  for (int status : {1001, 4000, 4004, 5000, 5003})  // not initialized, internal errors, execution failures
    EXPECT_EQ(classify_conv_failure(status), ConvFailure::kFatal) << status;
}

bool same(const std::vector<ConvCandidate>& a, const std::vector<ConvCandidate>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].algo != b[i].algo || a[i].math != b[i].math || a[i].workspace != b[i].workspace) return false;
  return true;
}

// cuDNN lists one algorithm once per math type: dropping by algorithm alone took whichever came
// first, possibly the one that works.
TEST(CudnnPolicy, ForgettingACandidateDropsThatAlgorithmAndMathTypeOnly) {
  const ConvAlgoKey key{0, 1, 2}, other{0, 1, 3};
  ConvAlgoCache cache;
  cache[key] = {{1, 1, 100}, {1, 3, 200}, {2, 1, 0}};
  cache[other] = {{1, 3, 200}};
  forget_candidate(cache, key, 1, 3);
  EXPECT_TRUE(same(cache[key], {{1, 1, 100}, {2, 1, 0}}));
  EXPECT_TRUE(same(cache[other], {{1, 3, 200}}));
  forget_candidate(cache, key, 7, 1);  // not listed: nothing changes
  EXPECT_EQ(cache[key].size(), 2u);
}

// An emptied list stayed cached, and every later call threw "failed for every cuDNN algorithm"
// without a reason; without the key, the next call chooses again.
TEST(CudnnPolicy, AShapeWhoseLastCandidateIsForgottenIsChosenAgain) {
  const ConvAlgoKey key{4, 5};
  ConvAlgoCache cache;
  cache[key] = {{1, 1, 100}, {2, 1, 0}};
  forget_candidate(cache, key, 1, 1);
  forget_candidate(cache, key, 2, 1);
  EXPECT_EQ(cache.count(key), 0u);
  forget_candidate(cache, key, 2, 1);  // already gone: no effect
  EXPECT_TRUE(cache.empty());
}

Conv2dGeometry geometry(int64_t batch, int64_t in_channels, int64_t hw, int64_t out_channels, int64_t kernel) {
  Conv2dGeometry g;
  g.batch = batch;
  g.in_channels = in_channels;
  g.in_h = g.in_w = hw;
  g.out_channels = out_channels;
  g.kernel_h = g.kernel_w = kernel;
  g.pad_h = g.pad_w = kernel / 2;
  g.out_h = g.out_w = hw;
  return g;
}

TEST(CudnnPolicy, TensorsOverCudnnsElementLimitAreRefusedNamingTheShape) {
  EXPECT_NO_THROW(check_cudnn_element_limit(geometry(63, 128, 512, 128, 3)));  // 2113929216 elements
  try {
    check_cudnn_element_limit(geometry(64, 128, 512, 8, 3));  // every dimension fits in an int
    FAIL() << "a 2^31-element input was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "conv2d: the input [64, 128, 512, 512] (2147483648 elements) is larger than the 2147483647 (2^31 - 1) "
              "elements cuDNN's tensor descriptors hold; split the batch into smaller ones");
  }
  EXPECT_THROW(check_cudnn_element_limit(geometry(64, 8, 512, 128, 3)), std::invalid_argument);  // the output
  EXPECT_THROW(check_cudnn_element_limit(geometry(1, 65536, 8, 65536, 1)), std::invalid_argument);  // the weight
  EXPECT_THROW(check_cudnn_element_limit(geometry(INT64_MAX / 2, 4, 4, 4, 1)), std::invalid_argument);  // overflow
}

TEST(CudnnPolicy, VolumesOverCudnnsElementLimitAreRefusedNamingTheShape) {
  Conv3dGeometry g;
  g.batch = 32;
  g.in_channels = 64;
  g.in_d = g.out_d = 64;
  g.in_h = g.in_w = g.out_h = g.out_w = 128;  // 32 * 64 * 64 * 128 * 128 = 2^31
  g.out_channels = 8;
  g.kernel_d = g.kernel_h = g.kernel_w = 3;
  try {
    check_cudnn_element_limit(g);
    FAIL() << "a 2^31-element input was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "conv3d: the input [32, 64, 64, 128, 128] (2147483648 elements) is larger than the 2147483647 (2^31 - 1) "
              "elements cuDNN's tensor descriptors hold; split the batch into smaller ones");
  }
  g.batch = 31;
  EXPECT_NO_THROW(check_cudnn_element_limit(g));
}

}  // namespace
}  // namespace colony::kernels::cuda
