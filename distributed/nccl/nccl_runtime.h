// The NCCL and CUDA calls ProcessGroupNCCL makes, behind one small interface, so that the group's
// logic (the unique id's exchange through the store, its keys, the watchdog's abort path, the
// errors' words) runs on the host against a fake in tests, as the caching allocator's tests fake
// the raw allocator. real_nccl_runtime() is the one programs use (nccl_runtime_cuda.cc).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "distributed/comm/process_group.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

namespace colony::dist::nccl_detail {

// Thrown by query() when the CUDA runtime is already shutting down (cudaErrorCudartUnloading: the
// process is exiting and static destructors run): nothing about the GPU can be known any more.
class RuntimeUnloading : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Opaque handles: ncclComm_t, cudaStream_t, cudaEvent_t in the real runtime.
using CommHandle = void*;
using StreamHandle = void*;
using EventHandle = void*;

constexpr size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES

// What ncclCommGetAsyncError says about a communicator.
struct CommState {
  enum Status { kReady, kInProgress, kFailed };
  Status status = kReady;
  std::string error;  // kFailed: NCCL's words, e.g. "remote process exited or there was a network error"
};

class NcclRuntime {
 public:
  virtual ~NcclRuntime() = default;

  // The device tensors of `index` live on (cuda:index; the fake: cpu), and the current one.
  virtual Device device(int index) const = 0;
  virtual int current_device() = 0;

  // ncclGetUniqueId, as kUniqueIdBytes bytes.
  virtual std::string unique_id() = 0;
  // Starts creating this rank's communicator on `device` without blocking (ncclCommInitRankConfig
  // with ncclConfig_t::blocking = 0), so a watchdog can abort it; state() says when it is ready.
  // Throws std::runtime_error when NCCL refuses at once.
  virtual CommHandle init_comm(const std::string& unique_id, int size, int rank, int device) = 0;
  // ncclCommGetAsyncError.
  virtual CommState state(CommHandle comm) = 0;
  // ncclCommAbort: stops its kernels and frees it without waiting for the peers. Never blocks long
  // (a non-blocking communicator is reclaimed on NCCL's own thread, which also waits there for the
  // CUDA graphs that captured its collectives to be destroyed).
  virtual void abort(CommHandle comm) = 0;
  // ncclCommFinalize + ncclCommDestroy once its work has finished. Finalizing waits for every CUDA
  // graph that captured one of its collectives to be destroyed (NCCL 2.26 and later), so a group
  // that captured any aborts instead. Throws std::runtime_error when finalizing fails or has not
  // finished within `timeout`; the communicator is then not destroyed (the caller aborts it).
  virtual void destroy(CommHandle comm, std::chrono::milliseconds timeout) = 0;

  // A new high-priority non-blocking stream on `device`, owned by the runtime for the process's life.
  virtual StreamHandle new_comm_stream(int device) = 0;
  // The stream compute ops on `device` are queued on now.
  virtual StreamHandle current_stream(int device) = 0;
  virtual EventHandle new_event(int device) = 0;
  virtual void destroy_event(EventHandle event) = 0;
  // record() and stream_wait() act on `device` (the event's and the stream's), whichever device is
  // current on the calling thread: a null stream is the legacy default stream of the current one.
  virtual void record(EventHandle event, StreamHandle stream, int device) = 0;
  // Makes later work on `stream` wait for `event` (no host block).
  virtual void stream_wait(StreamHandle stream, EventHandle event, int device) = 0;
  // True once the work before it has run. Throws RuntimeUnloading at exit, std::runtime_error for
  // other CUDA errors (a kernel that faulted).
  virtual bool query(EventHandle event) = 0;
  // Whether work queued on `stream` now goes into a CUDA graph being captured (cudaStreamIsCapturing).
  virtual bool capturing(StreamHandle stream) = 0;
  // `tensor`'s memory is used on `stream` too: the caching allocator must not hand it out again
  // before that stream's work so far has run (the caller may free the tensor meanwhile). Memory
  // the caching allocator did not allocate (from_blob) is its owner's to keep alive.
  virtual void record_stream(const Tensor& tensor, StreamHandle stream) = 0;

  // Queued on `stream` between group_start() and group_end(comm) (ncclGroupStart/End; group_end
  // returns once NCCL has queued the group, polling a non-blocking communicator's state meanwhile,
  // and throws when that takes longer than `timeout`: queuing may wait for peers to connect).
  // `count` in elements. Errors are std::runtime_error naming the NCCL result.
  virtual void group_start() = 0;
  virtual void group_end(CommHandle comm, std::chrono::milliseconds timeout) = 0;
  virtual void all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, CommHandle comm,
                          StreamHandle stream) = 0;
  // `send` is read on `root` only; every rank's `recv` receives it.
  virtual void broadcast(const void* send, void* recv, size_t count, DType dtype, int root, CommHandle comm,
                         StreamHandle stream) = 0;
  // `recv` is written on `root` only.
  virtual void reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, int root,
                      CommHandle comm, StreamHandle stream) = 0;
  // ncclAllGather: `recv` (size x count elements) receives every rank's `count` elements of `send`
  // in rank order.
  virtual void all_gather(const void* send, void* recv, size_t count, DType dtype, CommHandle comm,
                          StreamHandle stream) = 0;
  // ncclReduceScatter: rank r's `recv` (`count` elements) receives the reduction over ranks of
  // block r of `send` (size x count elements).
  virtual void reduce_scatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, CommHandle comm,
                              StreamHandle stream) = 0;
};

// NCCL through the CUDA toolkit; null in a build without CUDA.
std::shared_ptr<NcclRuntime> real_nccl_runtime();

// Whether NCCL can move `dtype` (broadcast, allgather): float32, float64, float16, bfloat16, int32,
// int64, uint8, and bool (as uint8: one byte each).
bool nccl_can_move(DType dtype);
// Whether NCCL can reduce `dtype`: all of those but bool (ncclUint8 would sum bools past 1).
bool nccl_can_reduce(DType dtype);

}  // namespace colony::dist::nccl_detail
