// NcclRuntime over the real NCCL and CUDA runtime. Compiled only when a CUDA toolkit is found.
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "distributed/nccl/nccl_runtime.h"
#include "runtime/cuda.h"
#include "runtime/stream.h"

namespace colony::dist::nccl_detail {
namespace {

static_assert(NCCL_UNIQUE_ID_BYTES == kUniqueIdBytes, "kUniqueIdBytes is NCCL's id size");

[[noreturn]] void nccl_fail(const char* call, ncclResult_t r) {
  throw std::runtime_error(std::string(call) + ": " + ncclGetErrorString(r) + " (" + ncclGetLastError(nullptr) + ")");
}

void check_nccl(const char* call, ncclResult_t r) {
  // ncclInProgress: a non-blocking communicator queued the call; state() says when it is done.
  if (r != ncclSuccess && r != ncclInProgress) nccl_fail(call, r);
}

void check_cuda(const char* call, cudaError_t e) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(e));
}

ncclDataType_t nccl_type(DType d) {
  switch (d) {
    case kFloat32: return ncclFloat32;
    case kFloat64: return ncclFloat64;
    case kFloat16: return ncclFloat16;
    case kBFloat16: return ncclBfloat16;
    case kInt32: return ncclInt32;
    case kInt64: return ncclInt64;
    case kUInt8: return ncclUint8;
    case kBool: return ncclUint8;  // moved only: the group refuses to reduce it (nccl_can_reduce)
    default: break;
  }
  throw std::invalid_argument(std::string("NCCL cannot move dtype ") + dtype_name(d));
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kAvg: return ncclAvg;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
  }
  return ncclSum;
}

ncclComm_t as_comm(CommHandle c) { return static_cast<ncclComm_t>(c); }
cudaStream_t as_stream(StreamHandle s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(EventHandle e) { return static_cast<cudaEvent_t>(e); }

class CudaNcclRuntime final : public NcclRuntime {
 public:
  Device device(int index) const override { return Device::cuda(index); }
  int current_device() override { return cuda::current_device(); }

  std::string unique_id() override {
    ncclUniqueId id;
    check_nccl("ncclGetUniqueId", ncclGetUniqueId(&id));
    return std::string(id.internal, sizeof(id.internal));
  }

  CommHandle init_comm(const std::string& unique_id, int size, int rank, int device) override {
    ncclUniqueId id;
    std::memcpy(id.internal, unique_id.data(), sizeof(id.internal));
    cuda::DeviceGuard guard(device);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // calls return ncclInProgress; the group polls, and can abort
    ncclComm_t comm = nullptr;
    check_nccl("ncclCommInitRankConfig", ncclCommInitRankConfig(&comm, size, id, rank, &config));
    return comm;
  }

  CommState state(CommHandle comm) override {
    ncclResult_t r = ncclSuccess;
    const ncclResult_t q = ncclCommGetAsyncError(as_comm(comm), &r);
    if (q != ncclSuccess) return {CommState::kFailed, std::string("ncclCommGetAsyncError: ") + ncclGetErrorString(q)};
    if (r == ncclSuccess) return {CommState::kReady, ""};
    if (r == ncclInProgress) return {CommState::kInProgress, ""};
    return {CommState::kFailed, std::string(ncclGetErrorString(r)) + " (" + ncclGetLastError(as_comm(comm)) + ")"};
  }

  void abort(CommHandle comm) override { ncclCommAbort(as_comm(comm)); }

  void destroy(CommHandle comm, std::chrono::milliseconds timeout) override {
    // Finalize flushes the communicator's work; non-blocking, so poll until it is done.
    const ncclResult_t r = ncclCommFinalize(as_comm(comm));
    check_nccl("ncclCommFinalize", r);
    if (r == ncclInProgress) wait_ready(comm, timeout, "ncclCommFinalize");
    ncclCommDestroy(as_comm(comm));
  }

  StreamHandle new_comm_stream(int device) override {
    cuda::DeviceGuard guard(device);
    int least = 0, greatest = 0;
    check_cuda("cudaDeviceGetStreamPriorityRange", cudaDeviceGetStreamPriorityRange(&least, &greatest));
    // The highest priority: communication kernels get SMs ahead of the backward pass they overlap.
    return new_stream(Device::cuda(device), greatest).handle();
  }

  StreamHandle current_stream(int device) override { return colony::current_stream(Device::cuda(device)).handle(); }

  EventHandle new_event(int device) override {
    cuda::DeviceGuard guard(device);
    cudaEvent_t e = nullptr;
    check_cuda("cudaEventCreateWithFlags", cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }
  void destroy_event(EventHandle event) override { cudaEventDestroy(as_event(event)); }
  // The device guard as in new_event(): a Work waited for on another thread than the one that made
  // the group (whose current device is cuda:0 unless it set one) must still act on the group's.
  void record(EventHandle event, StreamHandle stream, int device) override {
    cuda::DeviceGuard guard(device);
    check_cuda("cudaEventRecord", cudaEventRecord(as_event(event), as_stream(stream)));
  }
  void stream_wait(StreamHandle stream, EventHandle event, int device) override {
    cuda::DeviceGuard guard(device);
    check_cuda("cudaStreamWaitEvent", cudaStreamWaitEvent(as_stream(stream), as_event(event), 0));
  }
  bool query(EventHandle event) override {
    const cudaError_t e = cudaEventQuery(as_event(event));
    if (e == cudaErrorNotReady) return false;
    if (e == cudaErrorCudartUnloading) throw RuntimeUnloading(std::string("cudaEventQuery: ") + cudaGetErrorString(e));
    check_cuda("cudaEventQuery", e);
    return true;
  }
  bool capturing(StreamHandle stream) override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    check_cuda("cudaStreamIsCapturing", cudaStreamIsCapturing(as_stream(stream), &status));
    return status != cudaStreamCaptureStatusNone;
  }
  // Tensor::record_stream skips memory the caching allocator did not hand out (from_blob of a
  // CUDA pointer): asking the allocator about it would throw, and fail the collective.
  void record_stream(const Tensor& tensor, StreamHandle stream) override {
    tensor.record_stream(Stream(tensor.device(), stream));
  }

  void group_start() override { check_nccl("ncclGroupStart", ncclGroupStart()); }
  void group_end(CommHandle comm, std::chrono::milliseconds timeout) override {
    const ncclResult_t r = ncclGroupEnd();
    check_nccl("ncclGroupEnd", r);
    if (r == ncclInProgress) wait_ready(comm, timeout, "ncclGroupEnd");
  }
  void all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, CommHandle comm,
                  StreamHandle stream) override {
    check_nccl("ncclAllReduce",
               ncclAllReduce(send, recv, count, nccl_type(dtype), nccl_op(op), as_comm(comm), as_stream(stream)));
  }
  void broadcast(const void* send, void* recv, size_t count, DType dtype, int root, CommHandle comm,
                 StreamHandle stream) override {
    check_nccl("ncclBroadcast",
               ncclBroadcast(send, recv, count, nccl_type(dtype), root, as_comm(comm), as_stream(stream)));
  }
  void reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, int root, CommHandle comm,
              StreamHandle stream) override {
    check_nccl("ncclReduce",
               ncclReduce(send, recv, count, nccl_type(dtype), nccl_op(op), root, as_comm(comm), as_stream(stream)));
  }
  void all_gather(const void* send, void* recv, size_t count, DType dtype, CommHandle comm,
                  StreamHandle stream) override {
    check_nccl("ncclAllGather", ncclAllGather(send, recv, count, nccl_type(dtype), as_comm(comm), as_stream(stream)));
  }
  void reduce_scatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, CommHandle comm,
                      StreamHandle stream) override {
    check_nccl("ncclReduceScatter", ncclReduceScatter(send, recv, count, nccl_type(dtype), nccl_op(op), as_comm(comm),
                                                      as_stream(stream)));
  }

 private:
  // Until a non-blocking communicator has finished queuing (not running) what it was given by
  // `call`, or `timeout` has passed: a peer that never connects, or a CUDA graph still alive at
  // finalize, would otherwise keep this thread here for good.
  void wait_ready(CommHandle comm, std::chrono::milliseconds timeout, const char* call) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const CommState s = state(comm);
      if (s.status == CommState::kReady) return;
      if (s.status == CommState::kFailed) throw std::runtime_error(std::string(call) + ": NCCL: " + s.error);
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error(std::string(call) + " was still in progress after " +
                                 std::to_string(timeout.count()) + " ms");
      std::this_thread::yield();
    }
  }
};

}  // namespace

std::shared_ptr<NcclRuntime> real_nccl_runtime() {
  static auto runtime = std::make_shared<CudaNcclRuntime>();
  return runtime;
}

}  // namespace colony::dist::nccl_detail
