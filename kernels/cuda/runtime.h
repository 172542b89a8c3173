// Thin, checked wrappers over the CUDA runtime, in plain C++ types so that code compiled without
// CUDA headers can include this file. Only called from code under #ifdef COLONY_WITH_CUDA.
// Every failure throws std::runtime_error naming the call and cudaGetErrorString's text.
#pragma once

#include <cstddef>
#include <string>

namespace colony::kernels::cuda {

// 0 (never throws) when no driver or device; `reason` receives cudaGetErrorString's text then.
int device_count(std::string* reason = nullptr);
int current_device();
void set_device(int index);
void device_synchronize();

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

void* event_create();                       // timing enabled
void event_destroy(void* event);
void event_record(void* event, void* stream);
void stream_wait_event(void* stream, void* event);
void event_synchronize(void* event);
bool event_query(void* event);
float event_elapsed_ms(void* start, void* end);

}  // namespace colony::kernels::cuda
