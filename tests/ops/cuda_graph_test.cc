// The host-testable parts of CUDA graph capture (ops/cuda_graph.h): the generator's graph mode,
// the capture check of the runtime's synchronizing calls (with the "is capturing" query faked), and
// the errors of the graph API on a machine without a device. The replays themselves are tested
// against eager steps in tests/optim/cuda_graph_test.cc (*_CUDA).
#include "ops/cuda_graph.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "runtime/cuda/capture_state.h"
#include "runtime/cuda.h"
#include "tensor/random.h"
#include "ops/raw_ops.h"
#include "runtime/stream.h"
#include "tests/test_util.h"

#ifdef COLONY_WITH_CUDA
#include "runtime/cuda/runtime.h"
#endif

namespace colony {
namespace {

using testing::throws_with;

TEST(GraphGenerator, CapturedDrawsReadTheDeviceStateAndLeaveTheOffset) {
  Generator g(42);
  g.philox_args(3, Device::cuda(0));  // an eager draw: offset 0..2
  EXPECT_EQ(g.offset(), 3u);
  uint64_t fake_state[2] = {0, 0};    // stands for the graph's device memory
  g.graph_capture_begin(Device::cuda(0), fake_state);
  kernels::PhiloxArgs a = g.philox_args(5, Device::cuda(0));
  kernels::PhiloxArgs b = g.philox_args(2, Device::cuda(0));
  EXPECT_EQ(a.seed_ptr, &fake_state[0]);
  EXPECT_EQ(a.base_ptr, &fake_state[1]);
  EXPECT_EQ(a.offset, 0u);
  EXPECT_EQ(b.offset, 5u) << "the second draw follows the first within a replay";
  EXPECT_EQ(g.offset(), 3u) << "the capture itself draws nothing";
  // Another thread's draws stay eager (thread-local capture).
  kernels::PhiloxArgs other;
  std::thread([&] { other = g.philox_args(4, Device::cuda(0)); }).join();
  EXPECT_EQ(other.seed_ptr, nullptr);
  EXPECT_EQ(other.offset, 3u);
  EXPECT_EQ(g.graph_capture_end(), 7u);

  // Each replay starts where an eager step would and reserves what it draws.
  auto first = g.graph_replay_state(7);
  EXPECT_EQ(first.first, 42u);
  EXPECT_EQ(first.second, 7u);
  auto second = g.graph_replay_state(7);
  EXPECT_EQ(second.second, 14u);
  EXPECT_EQ(g.offset(), 21u);

  // Unpacked on the "device", a captured draw sees the replay's state.
  fake_state[0] = first.first;
  fake_state[1] = first.second;
  uint64_t seed = 0, offset = 0;
  kernels::philox_unpack(b, seed, offset);
  EXPECT_EQ(seed, 42u);
  EXPECT_EQ(offset, 12u);
}

TEST(GraphGenerator, CpuDrawOnTheCapturingThreadIsAnError) {
  Generator g(1);
  uint64_t state[2] = {};
  g.graph_capture_begin(Device::cuda(0), state);
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { g.philox_args(1, kCPU); }, "drawn once, at capture"));
  EXPECT_TRUE(throws_with<std::logic_error>([&] { g.graph_capture_begin(Device::cuda(0), state); },
                                            "one CUDA graph capture at a time"));
  g.graph_capture_end();
  EXPECT_THROW(g.graph_capture_end(), std::logic_error);
  EXPECT_THROW(g.graph_capture_begin(kCPU, state), std::invalid_argument);
  EXPECT_EQ(g.philox_args(1, kCPU).offset, 0u);
}

TEST(CudaGraphApi, WithoutADeviceEveryEntryPointSaysWhy) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "checks the no-device errors";
  cuda::CUDAGraph g;
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { g.capture_begin(); }, "no CUDA device available"));
  EXPECT_THROW(g.replay(), std::exception);
  EXPECT_FALSE(g.captured());
  EXPECT_EQ(cuda::CUDAGraph::capturing(), nullptr);
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { cuda::make_graphed_step([] {}, kCPU); },
                                                 "need a CUDA device, got cpu"));
  EXPECT_TRUE(throws_with<std::runtime_error>([] { cuda::make_graphed_step([] {}, Device::cuda(0)); },
                                              "no CUDA device available"));
  EXPECT_THROW(g.add_replay_prologue([] {}), std::logic_error);
}

#ifdef COLONY_WITH_CUDA
// The runtime layer's synchronizing calls refuse before touching CUDA, so this runs without a GPU.
TEST(CaptureCheck, RuntimeSyncCallsNameThemselvesWhileCapturing) {
  auto prev = kernels::cuda::set_capture_query_for_testing([] { return true; });
  namespace k = kernels::cuda;
  EXPECT_TRUE(throws_with<std::runtime_error>([] { k::device_synchronize(); }, "cudaDeviceSynchronize: "));
  EXPECT_TRUE(throws_with<std::runtime_error>([] { k::stream_synchronize(nullptr); }, "cudaStreamSynchronize: "));
  EXPECT_TRUE(throws_with<std::runtime_error>([] { k::event_synchronize(nullptr); }, "cudaEventSynchronize: "));
  EXPECT_TRUE(throws_with<std::runtime_error>([] { k::device_free(nullptr); }, "cudaFree: "));
  EXPECT_TRUE(throws_with<std::runtime_error>([] { k::host_free_pinned(nullptr); }, "cudaFreeHost: "));
  char host[4];
  EXPECT_TRUE(throws_with<std::runtime_error>(
      [&] { k::memcpy(host, host, 4, k::CopyKind::DeviceToHost, nullptr, /*async=*/false); }, "item()"));
  kernels::cuda::set_capture_query_for_testing(prev);
}
#endif

// The index kernels' error record (runtime/cuda/device_errors.h) is pinned host memory allocated
// at first use, and allocating it inside a capture would invalidate the capture: a graph whose
// index_select is the process's first index kernel must capture, replay, and report a bad index
// after a replay. In a fresh process (the threadsafe death test re-runs the binary for this test
// alone), where no earlier test has allocated the record.
TEST(CudaGraphDeathTest, FirstIndexKernelOfTheProcessCanBeCaptured_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto child = [] {
    const Device dev = Device::cuda(0);
    Tensor x = raw::arange(0, 10, 1, TensorOptions(kFloat32).device(dev));
    Tensor index = raw::arange(0, 3, 1, TensorOptions(kInt64).device(dev));
    Tensor y;
    StreamGuard on(new_stream(dev));
    cuda::CUDAGraph graph;
    try {
      graph.capture_begin();
      y = raw::index_select(x, 0, index);
      graph.capture_end();
      index.copy_(raw::full({3}, 7.0, TensorOptions(kInt64).device(dev)));
      graph.replay();
      if (raw::to(y, kCPU, kFloat32).data_ptr<float>()[2] != 7.0f) {
        std::fprintf(stderr, "the replay did not read the new index\n");
        std::exit(2);
      }
      index.copy_(raw::full({3}, 10.0, TensorOptions(kInt64).device(dev)));
      graph.replay();
      cuda::synchronize();
      std::fprintf(stderr, "index 10 of 10 rows was not reported\n");
      std::exit(3);
    } catch (const std::exception& e) {
      const std::string m = e.what();
      std::fprintf(stderr, "%s\n", m.c_str());
      std::exit(m.find("index 10 is out of range") != std::string::npos ? 0 : 4);
    }
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "index 10 is out of range");
}

}  // namespace
}  // namespace colony
