// CPU thread control for users (torch.set_num_threads): every multithreaded CPU kernel shares the
// project thread pool in kernels/cpu/parallel.h. COLONY_NUM_THREADS sets the starting value.
#pragma once

#include "kernels/cpu/parallel.h"

namespace colony {

inline int get_num_threads() { return kernels::cpu::num_threads(); }
inline void set_num_threads(int n) { kernels::cpu::set_num_threads(n); }

}  // namespace colony
