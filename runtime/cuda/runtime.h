// Thin, checked wrappers over the CUDA runtime, in plain C++ types so that code compiled without
// CUDA headers can include this file. Only called from code under #ifdef COLONY_WITH_CUDA.
// Every failure throws std::runtime_error naming the call and cudaGetErrorString's text. Every
// synchronization (device, stream, event, blocking copy) then reports a bad index a kernel
// recorded on the device (check_device_errors in runtime/cuda/device_errors.h).
#pragma once

#include <cstddef>
#include <string>

#include "runtime/cuda/capture_state.h"
#include "runtime/cuda/runtime_counters.h"

namespace colony::kernels::cuda {

// 0 (never throws) when no driver or device; `reason` receives cudaGetErrorString's text then.
int device_count(std::string* reason = nullptr);
int current_device();
void set_device(int index);
void device_synchronize();
// The device's UUID as nvidia-smi prints it ("GPU-6f1c2a3b-..."): the same physical GPU (or MIG
// instance) gives the same string in every process, whatever CUDA_VISIBLE_DEVICES renumbered.
std::string device_uuid(int index);

void* device_malloc(size_t nbytes);         // nullptr on cudaErrorMemoryAllocation
void device_free(void* ptr);
void* host_alloc_pinned(size_t nbytes);     // cudaHostAlloc; throws on failure
void host_free_pinned(void* ptr);
bool is_pinned(const void* ptr);

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };
// cudaMemcpyAsync on `stream`; synchronizes the stream afterwards unless `async`.
void memcpy(void* dst, const void* src, size_t nbytes, CopyKind kind, void* stream, bool async);

void* stream_create(int priority);          // non-blocking stream on the current device
void stream_synchronize(void* stream);
bool stream_query(void* stream);

// An event that only orders streams or says when work ended needs no timestamps
// (cudaEventDisableTiming makes recording and waiting on it cheaper); only one that
// event_elapsed_ms() will read needs `enable_timing`.
void* event_create(bool enable_timing);
void event_destroy(void* event);
void event_record(void* event, void* stream);
void stream_wait_event(void* stream, void* event);
void event_synchronize(void* event);
bool event_query(void* event);
float event_elapsed_ms(void* start, void* end);

// Called right after each kernel launch (and each cuBLAS / cuDNN call) made for `op`, a string
// literal ("conv2d", "sgd_step"): counts the launch, throws when the launch itself failed (naming
// `op`), and with COLONY_CUDA_SYNC=1 waits for the device so that a fault in the kernel is
// reported here, naming `op`. Without the switch a fault surfaces at a later runtime call, whose
// message then names the last op launched on this thread and suggests COLONY_CUDA_SYNC=1.
void after_launch(const char* op);

// CUDA graphs. A capture records the work queued on `stream` (and on streams that wait on its
// events) instead of running it; it uses cudaStreamCaptureModeThreadLocal, so only this thread is
// restricted (capture_state.h turns its host syncs into errors naming the op). The handles are
// cudaGraph_t / cudaGraphExec_t.
void stream_begin_capture(void* stream);
// The capture's id while `stream` is being captured, else 0 (the caching allocator routes a
// capture's allocations to its private pool by this id).
unsigned long long stream_capture_id(void* stream);
// Ends the capture (also when it failed) and returns the graph.
void* stream_end_capture(void* stream);
void* graph_instantiate(void* graph);
void graph_launch(void* exec, void* stream);
void graph_exec_destroy(void* exec);
void graph_destroy(void* graph);

}  // namespace colony::kernels::cuda
