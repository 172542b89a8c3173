// Per-thread scratch memory kept between calls: a training step repeats the same shapes, so after
// the first step a kernel that takes its temporaries from here no longer allocates.
#pragma once

#include <cstddef>
#include <vector>

namespace colony::kernels::cpu {

// n elements of T for this thread, valid until its next call with the same Owner, T and Slot. Owner
// (a tag type of the calling kernel's own) keeps kernels that call one another apart; Slot keeps
// one call's buffers apart.
template <typename Owner, typename T, int Slot>
T* thread_scratch(size_t n) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

}  // namespace colony::kernels::cpu
