// Counters and switches of the CUDA runtime layer, in plain C++ (no CUDA headers, compiled in every
// build) so that tests, benchmarks and kernel launch checks read them the same way on any machine.
//
// - Host synchronizations: every call that makes the host wait for the device (cudaDeviceSynchronize,
//   cudaStreamSynchronize, cudaEventSynchronize, a blocking cudaMemcpy, cudaFree and cudaFreeHost,
//   which synchronize implicitly, cuDNN's benchmark-mode trials) is counted where runtime.cc makes it.
//   A training step that never talks to the host leaves the count unchanged.
// - Kernel launches: counted by the launch check after every kernel and by each cuBLAS / cuDNN call
//   (one per library call, whatever number of kernels the library runs inside it).
// - COLONY_CUDA_SYNC=1 (like CUDA_LAUNCH_BLOCKING): after every launch the host waits for the
//   device, so an illegal address or a device-side assert is reported by the op that caused it
//   instead of by a later, unrelated call. Slow; for debugging only.
#pragma once

#include <cstdint>

namespace colony::kernels::cuda {

// Every host synchronization calls this right before the CUDA call that waits, with that call's
// name: it throws (check_not_capturing) when this thread is capturing a CUDA graph, else counts.
void count_host_sync(const char* op);
int64_t host_sync_count();
void count_launch();
int64_t launch_count();

// True when COLONY_CUDA_SYNC is set to 1 / true / yes / on (read once, at the first call), or
// after set_sync_after_launch(true).
bool sync_after_launch();
void set_sync_after_launch(bool on);
// How COLONY_CUDA_SYNC's value is read (exposed for tests): null, "", "0", "false", "no", "off"
// are false; "1", "true", "yes", "on" (any case) are true; anything else throws
// std::invalid_argument naming the variable and the accepted values.
bool parse_sync_env(const char* value);

}  // namespace colony::kernels::cuda
