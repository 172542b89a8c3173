// A fake of the NCCL/CUDA calls ProcessGroupNCCL makes (nccl/nccl_runtime.h), for host tests of
// the group and of what uses it (DDP's reducer): every call is recorded in words; tensors live in
// host memory, and a group of one moves data as NCCL would (an allreduce leaves a rank's own values,
// a broadcast copies from root); events complete when recorded, or when the test says.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "distributed/nccl/nccl_runtime.h"
#include "kernels/common/dtype.h"

namespace colony::dist::nccl_testing {

using nccl_detail::CommHandle;
using nccl_detail::CommState;
using nccl_detail::EventHandle;
using nccl_detail::StreamHandle;

inline const StreamHandle kCompute = reinterpret_cast<StreamHandle>(0x100);
inline const StreamHandle kComm = reinterpret_cast<StreamHandle>(0x200);

class FakeNcclRuntime final : public nccl_detail::NcclRuntime {
 public:
  struct Event {
    bool done = false;
  };

  // Knobs.
  std::atomic<int> polls_until_ready{2};  // init: in progress this many state() calls; -1: forever
  std::atomic<bool> events_complete{true};  // record() leaves events done; false: until complete_events()
  std::atomic<bool> capture{false};          // the compute stream is being captured in a CUDA graph
  // query() throws: as at exit once the CUDA runtime unloaded, or as after a kernel faulted.
  enum class QueryFailure { kNone, kRuntimeUnloading, kCudaError };
  std::atomic<QueryFailure> query_failure{QueryFailure::kNone};
  std::string async_error;                   // non-empty: state() reports it (guarded by mu)
  std::string collective_error;              // non-empty: the collective calls throw it (guarded by mu)
  std::string destroy_error;                 // non-empty: destroy() throws it (guarded by mu)
  // Runs inside group_end(), before it returns (set before the group is used): a test holds a
  // launch there, inside NCCL, while another thread acts.
  std::function<void()> in_group_end;

  // What happened.
  std::mutex mu;
  std::vector<std::string> calls;
  std::string init_id;
  int init_rank = -1, init_size = -1, init_device = -1;
  std::atomic<int> aborts{0}, destroys{0};
  std::chrono::milliseconds destroy_timeout{-1};    // what destroy() was given (guarded by mu)
  std::chrono::milliseconds group_end_timeout{-1};  // what the last group_end() was given (guarded by mu)
  std::atomic<int> group_depth{0};  // ncclGroupStart calls not yet ended, as NCCL counts them per thread
  // NCCL calls on the communicator after it was aborted (freed, in the real runtime): each would
  // be a use after free there (guarded by mu).
  std::vector<std::string> used_after_abort;

  void set_async_error(const std::string& e) {
    std::lock_guard<std::mutex> lock(mu);
    async_error = e;
  }
  void set_collective_error(const std::string& e) {
    std::lock_guard<std::mutex> lock(mu);
    collective_error = e;
  }
  void set_destroy_error(const std::string& e) {
    std::lock_guard<std::mutex> lock(mu);
    destroy_error = e;
  }
  void complete_events() {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& e : events_) e->done = true;
  }
  std::vector<std::string> take_calls() {
    std::lock_guard<std::mutex> lock(mu);
    auto out = std::move(calls);
    calls.clear();
    return out;
  }

  // Every test that uses the fake checks this: a call on an aborted communicator would be a use
  // after free with real NCCL.
  ~FakeNcclRuntime() override {
    for (const std::string& call : used_after_abort) ADD_FAILURE() << "NCCL " << call << " after ncclCommAbort";
  }

  Device device(int) const override { return kCPU; }
  int current_device() override { return 0; }
  std::string unique_id() override {
    static std::atomic<int> n{0};
    return std::string(nccl_detail::kUniqueIdBytes, static_cast<char>('A' + n++));
  }
  CommHandle init_comm(const std::string& id, int size, int rank, int device) override {
    std::lock_guard<std::mutex> lock(mu);
    init_id = id;
    init_rank = rank;
    init_size = size;
    init_device = device;
    aborted_ = false;  // a new communicator
    calls.push_back("init_comm(size " + std::to_string(size) + ", rank " + std::to_string(rank) + ", cuda:" +
                    std::to_string(device) + ")");
    return &comm_;
  }
  CommState state(CommHandle) override {
    std::lock_guard<std::mutex> lock(mu);
    if (aborted_) used_after_abort.push_back("state");
    if (!async_error.empty()) return {CommState::kFailed, async_error};
    const int left = polls_until_ready.load();
    if (left < 0) return {CommState::kInProgress, ""};
    if (left > 0) {
      --polls_until_ready;
      return {CommState::kInProgress, ""};
    }
    return {CommState::kReady, ""};
  }
  void abort(CommHandle) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (aborted_) used_after_abort.push_back("abort");
      aborted_ = true;
    }
    ++aborts;
    log("abort");
  }
  void destroy(CommHandle, std::chrono::milliseconds timeout) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      destroy_timeout = timeout;
      if (aborted_) used_after_abort.push_back("destroy");
      if (!destroy_error.empty()) throw std::runtime_error(destroy_error);
    }
    ++destroys;
    log("destroy");
  }
  StreamHandle new_comm_stream(int) override { return kComm; }
  StreamHandle current_stream(int) override { return kCompute; }
  EventHandle new_event(int) override {
    std::lock_guard<std::mutex> lock(mu);
    events_.push_back(std::make_unique<Event>());
    return events_.back().get();
  }
  void destroy_event(EventHandle) override {}
  void record(EventHandle e, StreamHandle s, int device) override {
    check_device(device);
    static_cast<Event*>(e)->done = events_complete.load();
    log(std::string("record on ") + name(s));
  }
  void stream_wait(StreamHandle s, EventHandle, int device) override {
    check_device(device);
    log(std::string(name(s)) + " waits");
  }
  bool query(EventHandle e) override {
    if (query_failure == QueryFailure::kRuntimeUnloading)
      throw nccl_detail::RuntimeUnloading("cudaEventQuery: driver shutting down");
    if (query_failure == QueryFailure::kCudaError)
      throw std::runtime_error("cudaEventQuery: an illegal memory access was encountered");
    std::lock_guard<std::mutex> lock(mu);
    return static_cast<Event*>(e)->done;
  }
  bool capturing(StreamHandle) override { return capture.load(); }
  void record_stream(const Tensor& t, StreamHandle s) override {
    log("record_stream " + std::to_string(t.numel()) + " on " + name(s));
  }
  void group_start() override {
    ++group_depth;
    log("group_start");
  }
  void group_end(CommHandle, std::chrono::milliseconds timeout) override {
    if (in_group_end) in_group_end();
    {
      std::lock_guard<std::mutex> lock(mu);
      group_end_timeout = timeout;
      if (aborted_) used_after_abort.push_back("group_end");
    }
    --group_depth;
    log("group_end");
  }
  void all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, CommHandle,
                  StreamHandle s) override {
    throw_collective_error();
    copy(send, recv, count, dtype);
    log("all_reduce " + std::to_string(count) + " " + dtype_name(dtype) + " " + reduce_op_name(op) + " on " + name(s));
  }
  void broadcast(const void* send, void* recv, size_t count, DType dtype, int root, CommHandle,
                 StreamHandle s) override {
    throw_collective_error();
    copy(send, recv, count, dtype);
    log("broadcast " + std::to_string(count) + " root " + std::to_string(root) + " on " + name(s));
  }
  void reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, int root, CommHandle,
              StreamHandle s) override {
    throw_collective_error();
    copy(send, recv, count, dtype);
    log("reduce " + std::to_string(count) + " " + reduce_op_name(op) + " root " + std::to_string(root) + " on " +
        name(s));
  }

  // A group of one: the one block is this rank's own.
  void all_gather(const void* send, void* recv, size_t count, DType dtype, CommHandle, StreamHandle s) override {
    throw_collective_error();
    copy(send, recv, count, dtype);
    log("all_gather " + std::to_string(count) + " " + dtype_name(dtype) + " on " + name(s));
  }
  void reduce_scatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, CommHandle,
                      StreamHandle s) override {
    throw_collective_error();
    copy(send, recv, count, dtype);
    log("reduce_scatter " + std::to_string(count) + " " + dtype_name(dtype) + " " + reduce_op_name(op) + " on " +
        name(s));
  }

 private:
  static const char* name(StreamHandle s) { return s == kComm ? "comm" : s == kCompute ? "compute" : "?"; }
  void log(const std::string& c) {
    std::lock_guard<std::mutex> lock(mu);
    calls.push_back(c);
  }
  // Event and stream calls must name the group's device (the real runtime makes it current).
  void check_device(int device) {
    std::lock_guard<std::mutex> lock(mu);
    if (init_device >= 0 && device != init_device)
      calls.push_back("wrong device: cuda:" + std::to_string(device) + ", the group is on cuda:" +
                      std::to_string(init_device));
  }
  void throw_collective_error() {
    std::lock_guard<std::mutex> lock(mu);
    if (aborted_) used_after_abort.push_back("collective");
    if (!collective_error.empty()) throw std::runtime_error(collective_error);
  }
  static void copy(const void* send, void* recv, size_t count, DType dtype) {
    if (send != nullptr && recv != nullptr && send != recv)
      std::memcpy(recv, send, count * static_cast<size_t>(element_size(dtype)));
  }

  int comm_ = 0;
  bool aborted_ = false;  // the communicator of the last init_comm was aborted (guarded by mu)
  std::vector<std::unique_ptr<Event>> events_;
};

}  // namespace colony::dist::nccl_testing
