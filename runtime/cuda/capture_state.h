// Whether this thread is capturing a CUDA graph, in plain C++ (compiled in every build, so that the
// check below runs and is tested on machines without a GPU).
//
// Why: while a stream is being captured, a call that makes the host wait for the device
// (cudaStreamSynchronize, a blocking cudaMemcpy behind item() or to(kCPU), cudaFree, cuDNN's
// benchmark trials) fails with cudaErrorStreamCaptureUnsupported and, worse, invalidates the whole
// capture, so the error surfaces later at cudaStreamEndCapture without naming the culprit. Every
// host synchronization of the runtime layer goes through count_host_sync(op), which asks
// check_not_capturing(op) first and so throws at the op itself, before any CUDA call is made.
//
// Captures use cudaStreamCaptureModeThreadLocal (kernels/cuda/graph.h): only the capturing thread
// is restricted, so the state is per thread. graph.cc notes begin and end; tests replace the query.
// One kind of call is refused on every thread, though: a wait for the whole device
// (cudaDeviceSynchronize, cudaFreeHost) while any of its streams is captured fails and invalidates
// that capture, whichever thread makes it. So the count of captures underway is kept for the
// process too (any_thread_capturing, check_no_capture_anywhere).
#pragma once

namespace colony::kernels::cuda {

// Called by graph.cc around a capture made by this thread (nesting is an error there, not here).
void note_capture_begin();
void note_capture_end();

// True while this thread captures a graph (as noted above, or as the test query says).
bool thread_is_capturing();

// For tests: answers thread_is_capturing() with `query` instead of the noted state; nullptr
// restores the default. Returns the previous query (nullptr when it was the default).
using CaptureQuery = bool (*)();
CaptureQuery set_capture_query_for_testing(CaptureQuery query);

// True while any thread of the process captures a graph (as noted above), or while the test query
// says this thread does.
bool any_thread_capturing();

// For the calls that wait for the whole device: throws std::runtime_error, naming `op`, when this
// thread (as check_not_capturing) or another thread is capturing a graph.
void check_no_capture_anywhere(const char* op);

// Throws std::runtime_error when this thread is capturing:
//   "<op>: would make the host wait for the device while this thread captures a CUDA graph ..."
// `op` names what was asked (e.g. "item()", "cudaStreamSynchronize").
void check_not_capturing(const char* op);

}  // namespace colony::kernels::cuda
