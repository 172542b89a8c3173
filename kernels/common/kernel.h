// A kernel entry point declared once, for both devices. Its header in kernels/common (beside the
// math both devices share) says
//
//   COLONY_KERNEL(SoftmaxForward, DType dtype, const void* x, void* y, int64_t outer, int64_t dim,
//                 int64_t inner, bool log);
//
// which declares the tag SoftmaxForward with the two implementations the device folders define,
// with exactly those parameters (a mismatch is a compile error, not a link error):
//
//   kernels/cpu/softmax.cc:  void SoftmaxForward::cpu(DType dtype, const void* x, ...) {...}
//   kernels/cuda/softmax.cu: void SoftmaxForward::cuda(DType dtype, ..., bool log, void* stream) {...}
//
// The CUDA one takes the cudaStream_t to queue its work on last, and is defined only in CUDA
// builds. The op's front function (ops/) calls run_kernel<SoftmaxForward>(device, args...)
// (runtime/run_kernel.h), the one dispatch seam: there is no per-op entry to add to a backend class,
// a header per device, or a dispatch switch.
#pragma once

#define COLONY_KERNEL(Tag, ...)                                                                         \
  struct Tag {                                                                                          \
    static constexpr const char* name = #Tag;                                                           \
    /* Defined in kernels/cpu; runs on the calling thread (and the CPU thread pool). */                 \
    static void cpu(__VA_ARGS__);                                                                       \
    /* Defined in kernels/cuda (CUDA builds only); queues the work on `stream` of the current device. */ \
    static void cuda(__VA_ARGS__, void* stream);                                                        \
  }
