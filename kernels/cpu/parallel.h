// The project-wide CPU thread pool. Every multithreaded CPU kernel goes through parallel_for, so
// set_num_threads() (or COLONY_NUM_THREADS, which the launcher sets to cores / local processes)
// controls all of them.
#pragma once

#include <cstdint>
#include <functional>

namespace colony::kernels::cpu {

// Number of threads parallel_for uses, the caller included. Defaults to COLONY_NUM_THREADS when set,
// else the hardware concurrency.
int num_threads();
// n >= 1. Takes effect for the next parallel_for.
void set_num_threads(int n);

// Calls fn(begin, end) over disjoint chunks covering [0, n). Work under `grain` elements per thread is
// not split, so small ops stay on the calling thread. Nested calls run serially. The first exception
// thrown by a chunk is rethrown on the caller after all chunks finish.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace colony::kernels::cpu
