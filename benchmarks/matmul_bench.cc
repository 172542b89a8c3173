// CPU GEMM throughput: a 512 x 512 x 512 float32 raw::mm on 1 and 2 threads, after warm-up, as
// GFLOP/s (2 * n^3 flops per product), A @ B and A @ B^T (a linear layer's forward), on each of
// gemm's float kernels (kernels/cpu/gemm.h): Eigen, small_gemm.h's register tiles and
// packed_gemm.h's blocked product. With 2 threads the rows are split over the thread pool, one single-threaded
// product per chunk. Then the same in bfloat16 (autocast's CPU type): widened to float32 around
// the float32 kernel, on the AVX512_BF16 tiles where the CPU has them
// (kernels/cpu/small_gemm_bf16.h), and on AMX tiles where it has those (kernels/cpu/amx_gemm.h).
// Optional argument: the matrix size.
//
//   matmul_bench --dtype bf16|f32 --size N --threads T [--trials R] [--form ab|abt|atb]
//                [--m M --n N --k K] [--kernel auto|eigen|tiles|packed] [--cpu-time]
// times only A @ B (or A @ B^T, A^T @ B: a linear layer's forward and weight gradient) of that
// type, size (or [M, K] x [K, N], each size not given being N) and thread count on the kernel the
// library picks (Auto) or the float kernel named (--cpu-time: in the thread's CPU time, 1 thread),
// and prints gflops=X (the best trial) as its last line, as benchmarks/matmul_pytorch.py does for
// torch.mm, so the two can be compared in alternating rounds. Without --dtype the tables above
// are printed, then gflops= of float32 A @ B at the size, 1 thread.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/small_gemm_bf16.h"
#include "kernels/cpu/small_gemm_isa.h"
#include "ops/raw_ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

struct Timing {
  double best, median;  // seconds per product
};

// Many short trials: the best is the one least disturbed by other processes
// on the machine (the figure to compare), the median what a busy machine gives.
// This thread's CPU time, in seconds: what a 1-thread product costs with the time other processes
// held the core taken out (a 15 ms product on a shared 2-core machine is often preempted).
double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

Timing time_mm(const colony::Tensor& a, const colony::Tensor& b, int trials, bool cpu_time = false) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 3; ++i) colony::raw::mm(a, b);  // warm-up: page in memory, start the pool
  std::vector<double> t;
  for (int i = 0; i < trials; ++i) {
    if (cpu_time) {
      const double start = thread_cpu_seconds();
      colony::raw::mm(a, b);
      t.push_back(thread_cpu_seconds() - start);
      continue;
    }
    auto start = clock::now();
    colony::raw::mm(a, b);
    t.push_back(std::chrono::duration<double>(clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return {t.front(), t[t.size() / 2]};
}

}  // namespace

struct Options {
  std::string dtype;  // empty: the default tables
  int64_t size = 512;
  int threads = 1;
  int trials = 0;  // 0: 100 for float32, 30 for bfloat16 (the tables' counts)
  std::string form = "ab";  // ab: A @ B, abt: A @ B^T, atb: A^T @ B (transposed views, not copies)
  int64_t m = 0, n = 0, k = 0;  // 0: --size
  bool cpu_time = false;        // --cpu-time: the thread's CPU time per product (1 thread only)
  colony::kernels::cpu::GemmKernel kernel = colony::kernels::cpu::GemmKernel::Auto;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--dtype" && has_value) {
      o.dtype = argv[++i];
    } else if (arg == "--size" && has_value) {
      o.size = std::atoll(argv[++i]);
    } else if (arg == "--threads" && has_value) {
      o.threads = std::atoi(argv[++i]);
    } else if (arg == "--trials" && has_value) {
      o.trials = std::atoi(argv[++i]);
    } else if (arg == "--form" && has_value) {
      o.form = argv[++i];
    } else if ((arg == "--m" || arg == "--n" || arg == "--k") && has_value) {
      (arg == "--m" ? o.m : arg == "--n" ? o.n : o.k) = std::atoll(argv[++i]);
    } else if (arg == "--cpu-time") {
      o.cpu_time = true;
    } else if (arg == "--kernel" && has_value) {
      const std::string name = argv[++i];
      using colony::kernels::cpu::GemmKernel;
      if (name == "auto" || name == "eigen" || name == "tiles" || name == "packed") {
        o.kernel = name == "eigen" ? GemmKernel::Eigen : name == "tiles" ? GemmKernel::Tiles
                 : name == "packed" ? GemmKernel::Packed : GemmKernel::Auto;
      } else {
        std::fprintf(stderr, "matmul_bench: --kernel %s: expected auto, eigen, tiles or packed\n", name.c_str());
        std::exit(2);
      }
    } else if (i == 1 && arg[0] != '-') {
      o.size = std::atoll(argv[i]);
    } else {
      std::fprintf(stderr, "matmul_bench: unknown argument %s; usage: matmul_bench [--dtype bf16|f32] [--size N] "
                   "[--threads T] [--trials R] [--form ab|abt|atb] [--m M --n N --k K] [--kernel auto|eigen|tiles|packed] [--cpu-time] (or matmul_bench N)\n", arg.c_str());
      std::exit(2);
    }
  }
  if (!o.dtype.empty() && o.dtype != "bf16" && o.dtype != "f32") {
    std::fprintf(stderr, "matmul_bench: --dtype %s: expected bf16 or f32\n", o.dtype.c_str());
    std::exit(2);
  }
  if (o.form != "ab" && o.form != "abt" && o.form != "atb") {
    std::fprintf(stderr, "matmul_bench: --form %s: expected ab, abt or atb\n", o.form.c_str());
    std::exit(2);
  }
  if (o.cpu_time && o.threads != 1) {
    std::fprintf(stderr, "matmul_bench: --cpu-time times the calling thread, so it needs --threads 1\n");
    std::exit(2);
  }
  if (o.size < 1 || o.threads < 1 || o.trials < 0 || o.m < 0 || o.n < 0 || o.k < 0) {
    std::fprintf(stderr, "matmul_bench: --size and --threads must be at least 1, --trials, --m, --n and --k at "
                 "least 0\n");
    std::exit(2);
  }
  return o;
}

const char* gemm_kernel_label(colony::kernels::cpu::GemmKernel kernel) {
  using colony::kernels::cpu::GemmKernel;
  switch (kernel) {
    case GemmKernel::Eigen: return "eigen";
    case GemmKernel::Tiles: return "tiles";
    case GemmKernel::Packed: return "packed";
    default: return "auto";
  }
}

// Which kernel the library runs for an [m, k] x [k, n] product of `dtype` now.
std::string kernel_name(colony::DType dtype, int64_t m, int64_t n, int64_t k, bool a_col_major, bool b_col_major) {
  namespace cpu = colony::kernels::cpu;
  if (dtype == colony::DType::BFloat16) {
    if (!cpu::gemm_native_16bit(dtype)) return "widened to float32";
    return cpu::gemm_bf16_on_amx(m, n, k) ? "amx tiles" : cpu::active_small_gemm_bf16_fns()->isa;
  }
  const cpu::GemmKernel kernel = cpu::gemm_kernel(dtype, m, n, k, a_col_major, b_col_major);
  if (kernel == cpu::GemmKernel::Eigen) return "eigen";
  return std::string(gemm_kernel_label(kernel)) + "/" + cpu::active_small_gemm_fns<float>().isa;
}

// One type, size and thread count; prints gflops= last.
int run_one(const Options& o) {
  const int64_t m = o.m > 0 ? o.m : o.size, n = o.n > 0 ? o.n : o.size, k = o.k > 0 ? o.k : o.size;
  const colony::DType dtype = o.dtype == "bf16" ? colony::kBFloat16 : colony::kFloat32;
  colony::Generator gen(1);
  // Stored as the form reads them: A^T's operand is a [k, m] matrix, B^T's an [n, k] one.
  colony::Tensor a = colony::raw::randn(o.form == "atb" ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k},
                                        colony::TensorOptions(colony::kFloat32), &gen);
  colony::Tensor b = colony::raw::randn(o.form == "abt" ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n},
                                        colony::TensorOptions(colony::kFloat32), &gen);
  if (dtype != colony::kFloat32) {
    a = colony::raw::to(a, colony::kCPU, dtype);
    b = colony::raw::to(b, colony::kCPU, dtype);
  }
  colony::set_num_threads(o.threads);
  namespace cpu = colony::kernels::cpu;
  cpu::ScopedGemmKernel use(o.kernel);
  const int trials = o.trials > 0 ? o.trials : (dtype == colony::kFloat32 ? 100 : 30);
  const Timing t = time_mm(o.form == "atb" ? colony::raw::transpose(a, 0, 1) : a,
                           o.form == "abt" ? colony::raw::transpose(b, 0, 1) : b, trials, o.cpu_time);
  const double flops = 2.0 * static_cast<double>(m) * n * k;
  std::printf("colony mm %s %s [%lld,%lld]x[%lld,%lld] threads=%d kernel=%s trials=%d%s best %.3f ms median %.3f ms\n",
              o.form.c_str(), o.dtype.c_str(), static_cast<long long>(m), static_cast<long long>(k),
              static_cast<long long>(k), static_cast<long long>(n), o.threads, kernel_name(dtype, m, n, k, o.form == "atb", o.form == "abt").c_str(),
              trials, o.cpu_time ? " (thread CPU time)" : "", t.best * 1e3, t.median * 1e3);
  std::printf("gflops=%.1f\n", flops / t.best * 1e-9);
  return 0;
}

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  if (!options.dtype.empty()) return run_one(options);
  int64_t n = options.size;
  colony::Generator gen(1);
  colony::Tensor a = colony::raw::randn({n, n}, colony::TensorOptions(colony::kFloat32), &gen);
  colony::Tensor b = colony::raw::randn({n, n}, colony::TensorOptions(colony::kFloat32), &gen);
  double flops = 2.0 * static_cast<double>(n) * n * n;
  namespace cpu = colony::kernels::cpu;
  std::printf("mm float32 %lld x %lld x %lld, GFLOP/s best (median); the CPU kernels run %s, Auto picks %s\n",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
              cpu::active_small_gemm_fns<float>().isa, kernel_name(colony::kFloat32, n, n, n, false, false).c_str());
  for (int threads : {1, 2}) {
    colony::set_num_threads(threads);
    for (bool transposed : {false, true}) {
      const colony::Tensor b_arg = transposed ? colony::raw::transpose(b, 0, 1) : b;
      std::printf("threads=%d  A @ %s", threads, transposed ? "B^T" : "B  ");
      for (cpu::GemmKernel kernel : {cpu::GemmKernel::Eigen, cpu::GemmKernel::Tiles, cpu::GemmKernel::Packed}) {
        cpu::ScopedGemmKernel use(kernel);
        const Timing t = time_mm(a, b_arg, 100);
        std::printf("   %s %.1f (%.1f)", gemm_kernel_label(kernel), flops / t.best * 1e-9,
                    flops / t.median * 1e-9);
      }
      std::printf("\n");
    }
  }
  const colony::Tensor a16 = colony::raw::to(a, colony::kCPU, colony::kBFloat16);
  const colony::Tensor b16 = colony::raw::to(b, colony::kCPU, colony::kBFloat16);
  const bool native = cpu::has_bf16_small_gemm();
  const bool amx = native && cpu::gemm_bf16_on_amx(n, n, n);
  std::printf("mm bfloat16, best ms (GFLOP/s); bfloat16 tiles: %s; AMX: %s\n",
              native ? cpu::active_small_gemm_bf16_fns()->isa : "none on this CPU (AVX512_BF16 absent or capped)",
              amx ? "used at this size" : cpu::has_amx_gemm() ? "not at this size" : "inactive");
  for (int threads : {1, 2}) {
    colony::set_num_threads(threads);
    for (bool transposed : {false, true}) {
      const colony::Tensor b_arg = transposed ? colony::raw::transpose(b16, 0, 1) : b16;
      Timing widened;
      {
        cpu::ScopedSmallGemmBf16Fns none(nullptr);
        widened = time_mm(a16, b_arg, 30);
      }
      std::printf("threads=%d  A @ %s  widened %.3f ms (%.1f)", threads, transposed ? "B^T" : "B  ", widened.best * 1e3,
                  flops / widened.best * 1e-9);
      if (native) {
        cpu::ScopedAmxGemmFns no_amx(nullptr);
        const Timing t = time_mm(a16, b_arg, 30);
        std::printf("   %s %.3f ms (%.1f)", cpu::active_small_gemm_bf16_fns()->isa, t.best * 1e3,
                    flops / t.best * 1e-9);
      }
      if (amx) {
        const Timing t = time_mm(a16, b_arg, 30);
        std::printf("   amx %.3f ms (%.1f)", t.best * 1e3, flops / t.best * 1e-9);
      }
      std::printf("\n");
    }
  }
  Options last = options;
  last.dtype = "f32";
  return run_one(last);
}
