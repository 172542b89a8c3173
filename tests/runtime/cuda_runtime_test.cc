// CUDA availability, streams, events, pinned memory and the device allocator. The first group
// checks the no-device path (this machine); the *_CUDA tests run where a GPU exists.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/allocator.h"
#include "runtime/caching_allocator.h"
#include "runtime/cuda.h"
#include "ops/raw_optim_ops.h"
#include "runtime/stream.h"
#include "tests/test_util.h"

#ifdef COLONY_WITH_CUDA
#include "runtime/cuda/runtime.h"
#endif

namespace colony {
namespace {

using testing::throws_with;

#define SKIP_IF_CUDA_PRESENT() \
  if (cuda::device_count() > 0) GTEST_SKIP() << "tests the no-device path"

TEST(CudaRuntime, NoDeviceMeansZeroDevicesAndAReason) {
  SKIP_IF_CUDA_PRESENT();
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_FALSE(cuda::is_available());
  if (cuda::is_compiled()) {
    // The runtime's own words, e.g. "no CUDA-capable device is detected".
    EXPECT_EQ(cuda::unavailable_reason().rfind("cudaGetDeviceCount: ", 0), 0u)
        << cuda::unavailable_reason();
    EXPECT_GT(cuda::unavailable_reason().size(), std::string("cudaGetDeviceCount: ").size());
  } else {
    EXPECT_EQ(cuda::unavailable_reason(),
              "Colony was built without CUDA (no toolkit found or --config=cpu)");
  }
}

TEST(CudaRuntime, CheckDeviceNamesTheCallerAndTheReason) {
  SKIP_IF_CUDA_PRESENT();
  try {
    cuda::check_device(0, "to(cuda:0)");
    FAIL() << "check_device accepted a missing device";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "to(cuda:0): no CUDA device available (" + cuda::unavailable_reason() + ")");
  }
  EXPECT_TRUE(throws_with<std::runtime_error>([] { cuda::set_device(0); },
                                              "no CUDA device available"));
  EXPECT_TRUE(throws_with<std::runtime_error>([] { cuda::current_device(); },
                                              "no CUDA device available"));
  EXPECT_TRUE(throws_with<std::runtime_error>([] { cuda::synchronize(); },
                                              "no CUDA device available"));
  EXPECT_TRUE(throws_with<std::runtime_error>([] { cuda::DeviceGuard g(0); },
                                              "DeviceGuard(cuda:0): no CUDA device available"));
}

TEST(CudaRuntime, CudaAllocatorWithoutDeviceThrows) {
  SKIP_IF_CUDA_PRESENT();
  EXPECT_TRUE(throws_with<std::runtime_error>([] { cuda_allocator(0); },
                                              "cuda_allocator(cuda:0): no CUDA device available"));
  EXPECT_TRUE(throws_with<std::runtime_error>([] { cuda_caching_allocator(1); },
                                              "cuda_allocator(cuda:1): no CUDA device available"));
  cuda_empty_cache();  // nothing cached, nothing to do, no error
}

TEST(CudaRuntime, CpuStreamsAreSynchronousNoOps) {
  Stream s = current_stream(kCPU);
  EXPECT_EQ(s, Stream());
  EXPECT_TRUE(s.device().is_cpu());
  EXPECT_EQ(s.handle(), nullptr);
  EXPECT_TRUE(s.query());
  s.synchronize();
  EXPECT_EQ(new_stream(kCPU), Stream());
  {
    StreamGuard g(s);
    EXPECT_EQ(current_stream(kCPU), Stream());
  }
}

TEST(CudaRuntime, CudaStreamsWithoutDeviceThrow) {
  SKIP_IF_CUDA_PRESENT();
  EXPECT_TRUE(throws_with<std::runtime_error>([] { current_stream(Device::cuda(0)); },
                                              "current_stream(cuda:0): no CUDA device available"));
  EXPECT_TRUE(throws_with<std::runtime_error>([] { new_stream(Device::cuda(0)); },
                                              "no CUDA device available"));
  Stream fake(Device::cuda(0), nullptr);
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { fake.synchronize(); },
                                              "no CUDA device available"));
  Event e;
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { e.record(fake); }, "no CUDA device available"));
}

// Events that only order streams are made without timing (cudaEventDisableTiming, cheaper to
// record and wait on); reading a time from one says so instead of failing inside CUDA.
TEST(CudaRuntime, EventsWithoutTimingSayTheyCannotBeTimed) {
  Event ordering(/*enable_timing=*/false), timed;
  EXPECT_TRUE(throws_with<std::runtime_error>(
      [&] { ordering.elapsed_ms(timed); },
      "Event::elapsed_ms: the start event was made with Event(/*enable_timing=*/false); make both with timing "
      "enabled"));
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { timed.elapsed_ms(ordering); }, "the end event was made"));
  Event moved(std::move(ordering));
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { moved.elapsed_ms(timed); }, "the start event was made"));
}

TEST(CudaRuntime, CpuEventsAreNoOpsAndCannotBeTimed) {
  Event start, end;
  start.record(Stream());
  end.record(current_stream(kCPU));
  EXPECT_TRUE(start.query());
  start.synchronize();
  start.wait(Stream());
  EXPECT_TRUE(throws_with<std::runtime_error>(
      [&] { start.elapsed_ms(end); },
      "Event::elapsed_ms: both events must have been recorded on a CUDA stream (start: not "
      "recorded on CUDA, end: not recorded on CUDA)"));

  Event moved(std::move(start));
  EXPECT_TRUE(moved.query());
  Event assigned;
  assigned = std::move(moved);
  EXPECT_TRUE(assigned.query());
}

TEST(CudaRuntime, PinnedAllocatorFallsBackToAlignedHostMemory) {
  Allocator* a = pinned_allocator();
  EXPECT_EQ(pinned_memory_is_page_locked(), cuda::device_count() > 0);
  EXPECT_TRUE(a->device().is_cpu());
  AllocatorStats before = a->stats();
  void* p = a->allocate(100);
  void* z = a->allocate(0);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(z, nullptr);
  EXPECT_NE(p, z);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  std::memset(p, 0xab, 100);  // writable, all of it
  AllocatorStats during = a->stats();
  // Both round up to the smallest size class, 4 KiB.
  EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 2 * 4096);
  EXPECT_EQ(during.num_allocs - before.num_allocs, 2);
  EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
  a->deallocate(p, 100);
  a->deallocate(z, 0);
  AllocatorStats after = a->stats();
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.num_raw_frees, before.num_raw_frees);  // kept for the next request
  void* again = a->allocate(4000);
  EXPECT_TRUE(again == p || again == z);
  a->deallocate(again, 4000);
  pinned_empty_cache();
  EXPECT_EQ(a->stats().num_raw_frees - before.num_raw_frees, 2);
}

// ---- on a GPU ---------------------------------------------------------------------------------

TEST(CudaRuntime, DevicesAreCountedAndChecked_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  int n = cuda::device_count();
  EXPECT_TRUE(cuda::is_available());
  EXPECT_TRUE(cuda::is_compiled());
  EXPECT_EQ(cuda::unavailable_reason(), "");
  cuda::check_device(n - 1, "test");
  EXPECT_TRUE(throws_with<std::runtime_error>(
      [n] { cuda::check_device(n, "to(cuda:" + std::to_string(n) + ")"); },
      "to(cuda:" + std::to_string(n) + "): device index " + std::to_string(n) + " out of range (" +
          std::to_string(n) + (n == 1 ? " device)" : " devices)")));
  EXPECT_TRUE(throws_with<std::runtime_error>([] { cuda::check_device(-1, "x"); },
                                              "x: device index -1 out of range"));
  cuda::set_device(0);
  EXPECT_EQ(cuda::current_device(), 0);
  {
    cuda::DeviceGuard g(n - 1);
    EXPECT_EQ(cuda::current_device(), n - 1);
  }
  EXPECT_EQ(cuda::current_device(), 0);
  cuda::synchronize();
  cuda::synchronize(0);
}

#ifdef COLONY_WITH_CUDA

TEST(CudaRuntime, AllocatorRoundTripsBytesAndReusesBlocks_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  namespace kc = kernels::cuda;
  Allocator* a = cuda_allocator(0);
  EXPECT_EQ(a, cuda_allocator(0));  // one per device
  EXPECT_EQ(a->device(), Device::cuda(0));
  std::vector<int32_t> host(1 << 16), back(host.size(), 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int32_t>(i * 2654435761u);
  size_t nbytes = host.size() * sizeof(int32_t);
  void* d = a->allocate(nbytes);
  void* stream = current_stream(Device::cuda(0)).handle();
  kc::memcpy(d, host.data(), nbytes, kc::CopyKind::HostToDevice, stream, false);
  void* d2 = a->allocate(nbytes);
  kc::memcpy(d2, d, nbytes, kc::CopyKind::DeviceToDevice, stream, false);
  kc::memcpy(back.data(), d2, nbytes, kc::CopyKind::DeviceToHost, stream, false);
  EXPECT_EQ(back, host);

  int64_t raw = a->stats().num_raw_allocs;
  a->deallocate(d2, nbytes);
  void* d3 = a->allocate(nbytes);
  EXPECT_EQ(d3, d2);
  EXPECT_EQ(a->stats().num_raw_allocs, raw);
  a->deallocate(d3, nbytes);
  a->deallocate(d, nbytes);
  cuda_empty_cache();
  EXPECT_EQ(a->stats().bytes_reserved, 0);
}

TEST(CudaRuntime, OutOfMemoryIsAClearError_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Allocator* a = cuda_allocator(0);
  size_t huge = size_t(1) << 50;  // a petabyte: no GPU has it
  EXPECT_TRUE(throws_with<std::runtime_error>(
      [&] { a->allocate(huge); },
      "CUDA out of memory: tried to allocate " + std::to_string(huge) + " bytes on cuda:0"));
  void* p = a->allocate(1024);  // the failure left the allocator and the device usable
  a->deallocate(p, 1024);
}

TEST(CudaRuntime, StreamsEventsAndGuards_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  namespace kc = kernels::cuda;
  Device dev = Device::cuda(0);
  EXPECT_EQ(current_stream(dev).handle(), nullptr);  // the default stream
  Stream s = new_stream(dev);
  ASSERT_NE(s.handle(), nullptr);
  EXPECT_EQ(s.device(), dev);
  {
    StreamGuard g(s);
    EXPECT_EQ(current_stream(dev), s);
    Stream seen_elsewhere;
    std::thread([&] { seen_elsewhere = current_stream(dev); }).join();
    EXPECT_EQ(seen_elsewhere.handle(), nullptr);  // current streams are per thread
  }
  EXPECT_EQ(current_stream(dev).handle(), nullptr);

  size_t nbytes = 64 << 20;
  void* pinned = pinned_allocator()->allocate(nbytes);
  EXPECT_TRUE(pinned_memory_is_page_locked());
  EXPECT_TRUE(kc::is_pinned(pinned));
  std::vector<char> pageable(16);
  EXPECT_FALSE(kc::is_pinned(pageable.data()));
  void* d = cuda_allocator(0)->allocate(nbytes);

  Event start, end;
  EXPECT_TRUE(start.query());  // never recorded
  start.record(s);
  kc::memcpy(d, pinned, nbytes, kc::CopyKind::HostToDevice, s.handle(), true);
  end.record(s);
  end.wait(current_stream(dev));  // default stream orders after the copy
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_TRUE(s.query());
  float ms = start.elapsed_ms(end);
  EXPECT_GT(ms, 0.f);
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { end.record(Stream()); },
                                              "the event belongs to cuda:0, the stream is on cpu"));
  Event cpu_event;
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { start.elapsed_ms(cpu_event); },
                                              "end: not recorded on CUDA"));
  s.synchronize();
  cuda_allocator(0)->deallocate(d, nbytes);
  pinned_allocator()->deallocate(pinned, nbytes);
}

TEST(CudaRuntime, RecordStreamWaitsForTheOtherStream_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  CachingAllocator* a = cuda_caching_allocator(0);
  Stream side = new_stream(Device::cuda(0));
  size_t nbytes = 1 << 20;
  void* p = a->allocate(nbytes);
  a->record_stream(p, side.handle());
  a->deallocate(p, nbytes);
  side.synchronize();  // the recorded event is complete now: the next request may reuse p
  void* q = a->allocate(nbytes);
  EXPECT_EQ(q, p);
  a->deallocate(q, nbytes);
}

TEST(CudaRuntime, DeviceWorkNeverWaitsForTheHostButReadingAValueDoes_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor a = raw::full({64, 64}, 0.5, TensorOptions(kFloat32).device(Device::cuda(0)));
  cuda::synchronize();
  const int64_t syncs = cuda::host_sync_count(), launches = cuda::kernel_launch_count();
  Tensor b = raw::matmul(a, a);
  Tensor c = raw::add(b, a, 1.0);
  EXPECT_EQ(cuda::host_sync_count(), syncs) << "queuing device work made the host wait";
  EXPECT_GE(cuda::kernel_launch_count() - launches, 1) << "the matmul was not counted";
  Tensor total = raw::sum(c);
  EXPECT_EQ(cuda::host_sync_count(), syncs);
  EXPECT_EQ(total.item<float>(), 4096 * 16.5f);  // item() copies to the host and waits: one sync
  EXPECT_EQ(cuda::host_sync_count(), syncs + 1);
  cuda::synchronize();
  EXPECT_EQ(cuda::host_sync_count(), syncs + 2);
}

// Optimizer, random and copy kernels run on their tensors' device whatever device is current.
TEST(CudaRuntime, OpsRunOnTheirTensorsDevice_MultiCUDA) {
  COLONY_REQUIRE_CUDA(2);
  cuda::set_device(0);
  const Device d1 = Device::cuda(1);
  Tensor p = raw::ones({1000}, TensorOptions(kFloat32).device(d1));
  Tensor g = raw::full({1000}, 2.0, TensorOptions(kFloat32).device(d1));
  Tensor buf;
  raw::sgd_step_(p, g, buf, kernels::SgdParams{0.25, 0, 0, 0, false, true, false});
  Tensor r = raw::empty({1000}, TensorOptions(kFloat32).device(d1));
  raw::uniform_(r, 2.0, 3.0);
  Tensor back = raw::to(r, Device::cuda(0), kFloat32);
  EXPECT_EQ(cuda::current_device(), 0);
  EXPECT_EQ(testing::values(p), std::vector<double>(1000, 0.5));
  for (double v : testing::values(back)) ASSERT_TRUE(v >= 2.0 && v <= 3.0) << v;
}

#endif  // COLONY_WITH_CUDA

TEST(CudaRuntime, CountersAndSyncSwitchExistInEveryBuild) {
  const int64_t syncs = cuda::host_sync_count();
  EXPECT_GE(syncs, 0);
  EXPECT_GE(cuda::kernel_launch_count(), 0);
  const bool before = cuda::sync_after_launch();
  cuda::set_sync_after_launch(!before);
  EXPECT_EQ(cuda::sync_after_launch(), !before);
  cuda::set_sync_after_launch(before);
  if (!cuda::is_available()) {
    EXPECT_EQ(cuda::host_sync_count(), syncs);
  }
}

}  // namespace
}  // namespace colony
