// The cuDNN convolution's host-side policy (kernels/cuda/cudnn_policy.h): which failures move on to
// the next algorithm, and the algorithm cache's bookkeeping.
#include "kernels/cuda/cudnn_policy.h"

#include <gtest/gtest.h>

#include <vector>

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

}  // namespace
}  // namespace colony::kernels::cuda
