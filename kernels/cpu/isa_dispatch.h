// The run-time choice of a CPU kernel family's copy, written once for every family. A family is a
// table of function pointers (a struct XFns) built once per instruction set from one source, each
// copy's table returned by a function in that copy's namespace (avx512::x_fns()), and its header
// declares, with definitions from isa_dispatch_impl.h (kernels/README.md, "CPU instruction sets"):
//  - active_x_fns(): the copy its kernels call now (active_copy or overridden_or);
//  - runnable_x_copies(), for tests: every copy this CPU runs, the emulated ones included
//    (runnable_copies);
//  - ScopedXFns = ScopedFns<XFns>: the tests' and benchmarks' override.
//
// This header only declares (and names copies, below). The per-ISA copies' translation units (-march=x86-64-v4, AMX) include
// it through their family's header, and a template defined here and used there could be emitted
// in their object as a weak symbol that the linker keeps for the baseline callers too: AVX-512 or
// AMX instructions on an AVX2 CPU, SIGILL. The definitions are in isa_dispatch_impl.h, which only
// baseline code includes; each family's .cc instantiates ScopedFns for its table, and
// tests/kernels/small_gemm_isa_symbols_test checks that the copies' objects define no symbol
// outside their own namespaces.
#pragma once

// A copy's name for its table's `isa` field, from the macro that names its namespace
// (COLONY_ISA_COPY_NAME(COLONY_SMALL_GEMM_ISA) is "avx512" in small_gemm_avx512.cc).
#define COLONY_ISA_COPY_NAME(ns) COLONY_ISA_COPY_NAME_STRING(ns)
#define COLONY_ISA_COPY_NAME_STRING(ns) #ns

namespace colony::kernels::cpu {

// Tests and benchmarks: a family's kernels run `fns` while this is alive; null: no copy (a family
// whose active copy may be null then keeps its other paths: widening, Eigen, the direct
// convolution). The override in force before is restored on destruction, so they nest. Not
// thread-safe against running kernels: set it between calls.
template <typename Fns>
class ScopedFns {
 public:
  explicit ScopedFns(const Fns* fns);
  ~ScopedFns();
  ScopedFns(const ScopedFns&) = delete;
  ScopedFns& operator=(const ScopedFns&) = delete;

 private:
  const Fns* saved_;
};

}  // namespace colony::kernels::cpu
