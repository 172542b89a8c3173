// The CUDA runtime behind plain C++ types. Everything except device_count() throws on failure, with
// the call's name and the runtime's own words.
#include "runtime/cuda/runtime.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "runtime/cuda/capture_state.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/device_errors.h"

namespace colony::kernels::cuda {
namespace {

// The op of the last kernel this thread launched (a string literal), so that an asynchronous fault
// reported by a later call can be traced to a candidate.
thread_local const char* last_op = nullptr;

// Errors raised by a kernel while it runs; the runtime reports them at the next call.
bool is_device_fault(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorHardwareStackError:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorInvalidAddressSpace:
      return true;
    default:
      return false;
  }
}


cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(void* e) { return static_cast<cudaEvent_t>(e); }

// cudaErrorNotReady is the normal "still running" answer of the query functions, not a failure.
bool ready(cudaError_t err, const char* call) {
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  check_cuda(err, call);
  return true;
}

}  // namespace

void check_cuda(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return;
  // Clear the last error so that the next, unrelated call does not report this one again (a device
  // fault stays sticky: the context is unusable after it).
  cudaGetLastError();
  std::string msg = std::string(call) + ": " + cudaGetErrorString(err);
  if (is_device_fault(err) && !sync_after_launch()) {
    msg += std::string(" (a kernel faulted earlier; the last op launched on this thread was ") +
           (last_op ? last_op : "none") + "; rerun with COLONY_CUDA_SYNC=1 to report the fault at the op that caused it)";
  }
  throw std::runtime_error(msg);
}

int device_count(std::string* reason) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    if (reason) *reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err);
    return 0;
  }
  if (n == 0 && reason) *reason = "cudaGetDeviceCount: no CUDA devices";
  return n;
}

int current_device() {
  int d = 0;
  check_cuda(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}

void set_device(int index) { check_cuda(cudaSetDevice(index), "cudaSetDevice"); }

std::string device_uuid(int index) {
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
  const auto* b = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

void device_synchronize() {
  check_no_capture_anywhere("cudaDeviceSynchronize");
  count_host_sync("cudaDeviceSynchronize");
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check_device_errors();
}

void* device_malloc(size_t nbytes) {
  void* p = nullptr;
  // A graph capture's private memory pool grows with cudaMalloc during the capture, which
  // cudaStreamCaptureModeThreadLocal would refuse as "potentially unsafe"; it is safe here because
  // the caching allocator owns the segment until the graph is destroyed (what PyTorch relies on).
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  check_cuda(cudaThreadExchangeStreamCaptureMode(&mode), "cudaThreadExchangeStreamCaptureMode");
  cudaError_t err = cudaMalloc(&p, nbytes);
  cudaThreadExchangeStreamCaptureMode(&mode);  // restores this thread's mode; cannot fail for a valid one
  if (err == cudaErrorMemoryAllocation) {
    // The caching allocator answers an out-of-memory by freeing its cache and retrying.
    cudaGetLastError();
    return nullptr;
  }
  check_cuda(err, "cudaMalloc");
  return p;
}

void device_free(void* ptr) {
  count_host_sync("cudaFree");  // cudaFree waits for the whole device
  check_cuda(cudaFree(ptr), "cudaFree");
}

void* host_alloc_pinned(size_t nbytes) {
  void* p = nullptr;
  // Portable: the pages are pinned for every device, not only the current one, so a loader thread
  // can fill buffers that any rank's device later reads.
  check_cuda(cudaHostAlloc(&p, nbytes, cudaHostAllocPortable), "cudaHostAlloc");
  return p;
}

void host_free_pinned(void* ptr) {
  check_no_capture_anywhere("cudaFreeHost");  // cudaFreeHost waits for the whole device
  count_host_sync("cudaFreeHost");
  check_cuda(cudaFreeHost(ptr), "cudaFreeHost");
}

bool is_pinned(const void* ptr) {
  cudaPointerAttributes attr{};
  cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

void memcpy(void* dst, const void* src, size_t nbytes, CopyKind kind, void* stream, bool async) {
  if (nbytes == 0) return;
  cudaMemcpyKind k = kind == CopyKind::HostToDevice   ? cudaMemcpyHostToDevice
                     : kind == CopyKind::DeviceToHost ? cudaMemcpyDeviceToHost
                                                      : cudaMemcpyDeviceToDevice;
  // Checked before the copy is queued: during a capture the copy itself would be recorded.
  if (!async) count_host_sync("blocking cudaMemcpy (item(), to(kCPU) or another synchronous copy)");
  check_cuda(cudaMemcpyAsync(dst, src, nbytes, k, as_stream(stream)), "cudaMemcpyAsync");
  if (!async) {
    check_cuda(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
    check_device_errors();
  }
}

void* stream_create(int priority) {
  // CUDA priorities are "lower number = higher priority" within a device-specific range; clamp so
  // a caller may ask for -1 (high) or 0 (default) without knowing the range.
  int least = 0, greatest = 0;
  check_cuda(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
  if (priority > least) priority = least;
  if (priority < greatest) priority = greatest;
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority),
        "cudaStreamCreateWithPriority");
  return s;
}

void stream_synchronize(void* stream) {
  count_host_sync("cudaStreamSynchronize");
  check_cuda(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
  check_device_errors();
}

bool stream_query(void* stream) { return ready(cudaStreamQuery(as_stream(stream)), "cudaStreamQuery"); }

void* event_create(bool enable_timing) {
  cudaEvent_t e = nullptr;
  check_cuda(cudaEventCreateWithFlags(&e, enable_timing ? cudaEventDefault : cudaEventDisableTiming),
             "cudaEventCreateWithFlags");
  return e;
}

void event_destroy(void* event) { check_cuda(cudaEventDestroy(as_event(event)), "cudaEventDestroy"); }

void event_record(void* event, void* stream) {
  check_cuda(cudaEventRecord(as_event(event), as_stream(stream)), "cudaEventRecord");
}

void stream_wait_event(void* stream, void* event) {
  check_cuda(cudaStreamWaitEvent(as_stream(stream), as_event(event), 0), "cudaStreamWaitEvent");
}

void event_synchronize(void* event) {
  count_host_sync("cudaEventSynchronize");
  check_cuda(cudaEventSynchronize(as_event(event)), "cudaEventSynchronize");
  check_device_errors();
}

bool event_query(void* event) { return ready(cudaEventQuery(as_event(event)), "cudaEventQuery"); }

float event_elapsed_ms(void* start, void* end) {
  float ms = 0.f;
  check_cuda(cudaEventElapsedTime(&ms, as_event(start), as_event(end)), "cudaEventElapsedTime");
  return ms;
}

void after_launch(const char* op) {
  count_launch();
  last_op = op;
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(op) + ": kernel launch failed: " + cudaGetErrorString(err));
  // Inside a graph capture nothing runs yet, so there is no fault to wait for (and waiting is
  // illegal); while another thread captures, waiting for the device would invalidate its capture.
  if (!sync_after_launch() || any_thread_capturing()) return;
  count_host_sync("COLONY_CUDA_SYNC=1 after a launch");
  err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string(op) + ": CUDA error in the kernel (found by COLONY_CUDA_SYNC=1): " +
                             cudaGetErrorString(err));
  }
  // A bad index the kernel recorded is reported here too, at the op that launched it.
  check_device_errors();
}

// ---- CUDA graphs ------------------------------------------------------------------------------

void stream_begin_capture(void* stream) {
  // The index and cross-entropy kernels' error record is pinned host memory allocated at first use;
  // cudaHostAlloc inside a capture would invalidate it, so a capture whose kernels are the process's
  // first index kernels could not be taken. Allocated here, before the capture starts.
  device_error_record();
  check_cuda(cudaStreamBeginCapture(as_stream(stream), cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  note_capture_begin();
}

unsigned long long stream_capture_id(void* stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  check_cuda(cudaStreamGetCaptureInfo(as_stream(stream), &status, &id), "cudaStreamGetCaptureInfo");
  return status == cudaStreamCaptureStatusActive ? id : 0;
}

void* stream_end_capture(void* stream) {
  cudaGraph_t graph = nullptr;
  cudaError_t err = cudaStreamEndCapture(as_stream(stream), &graph);
  note_capture_end();  // the capture is over whether or not it succeeded
  if (err == cudaErrorStreamCaptureInvalidated) {
    cudaGetLastError();
    throw std::runtime_error("cudaStreamEndCapture: the capture was invalidated by a call that is illegal while "
                             "capturing (an operation on another stream not joined to the capture, or a CUDA call "
                             "made outside Colony's runtime layer)");
  }
  check_cuda(err, "cudaStreamEndCapture");
  return graph;
}

void* graph_instantiate(void* graph) {
  cudaGraphExec_t exec = nullptr;
  check_cuda(cudaGraphInstantiate(&exec, static_cast<cudaGraph_t>(graph), 0), "cudaGraphInstantiate");
  return exec;
}

void graph_launch(void* exec, void* stream) {
  check_cuda(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec), as_stream(stream)), "cudaGraphLaunch");
  count_launch();  // one launch, however many kernels the graph holds
}

void graph_exec_destroy(void* exec) {
  check_cuda(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec)), "cudaGraphExecDestroy");
}

void graph_destroy(void* graph) { check_cuda(cudaGraphDestroy(static_cast<cudaGraph_t>(graph)), "cudaGraphDestroy"); }

}  // namespace colony::kernels::cuda
