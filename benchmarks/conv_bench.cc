// CPU convolution timings on LeNet-CIFAR10's layers (conv 3->6 k5 on 32x32, conv 6->16 k5 on
// 14x14) and the 2x2 max pool after each, at batch 32 and 128 on 1 and 2 threads, for both CPU
// algorithms (kernels/cpu/conv.h): forward, backward-input and backward-weight (with bias) in
// microseconds per call, best of several timed batches (the least disturbed by other work).
//
// The last lines add up LeNet's convolution training step as the network runs it: both forwards,
// conv1's weight gradient only (a first layer needs no input gradient), conv2's input and weight
// gradients. Two wider 3x3 layers show where Auto switches from Direct to Im2col. The last table
// times bfloat16 (autocast's CPU type) through the front functions: widened to float32 around the
// float32 kernels, and on the AVX512_BF16 tiles where the CPU has them (small_gemm_bf16.h).
//
//   bazel run -c opt //benchmarks:conv_bench            (add --quick for fewer repetitions)
//   bazel run -c opt //benchmarks:conv_bench -- --bf16 [--one-thread]
//                         (only the bfloat16 table per pass, AVX512_BF16 against AMX, the latter
//                         with output channels (amx) or pixels (amx_px: forward and input gradient;
//                         its weight gradient column is Auto's) on the tiles' rows; 2 threads or 1)
//   bazel run -c opt //benchmarks:conv_bench -- --pixels
//                         (LeNet's forwards alone, float32 and each bfloat16 path, 1 thread, 3
//                         alternating rounds)
//   bazel run -c opt //benchmarks:conv_bench -- --channels [rounds [layer]]
//                         (the forward with the output channels on the AMX tiles' rows against
//                         Auto without it, the pixel path and float32; LeNet's layers and two
//                         3x3 ones (or those whose name starts with `layer`, e.g. conv1), 1
//                         thread, alternating rounds: what set conv2d_bf16_channels)

//   bazel run -c opt //benchmarks:conv_bench -- --weight-rows [rounds]
//                         (bfloat16 weight gradients alone, no bias, 1 thread, batch 32, alternating
//                         rounds: Auto without conv_weight_rows.h's product against that product)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ctime>
#include <string>
#include <vector>

#include "kernels/common/conv_geometry.h"
#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/bf16_rows.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_channels.h"
#include "kernels/cpu/conv_weight_rows.h"
#include "kernels/cpu/small_gemm_bf16.h"
#include "kernels/cpu/small_gemm_isa.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

using colony::Tensor;
using colony::kernels::Conv2dGeometry;
using colony::kernels::cpu::ConvAlgorithm;
namespace raw = colony::raw;
namespace cpu = colony::kernels::cpu;

double g_min_seconds = 0.1;
int g_batches = 5;

double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// Microseconds per call: the best wall time of several timed batches, and the CPU time (all threads)
// of that batch, which stays meaningful when other jobs share the cores.
struct Timing {
  double wall_us, cpu_us;
};

Timing best_us(const std::function<void()>& fn) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 3; ++i) fn();  // warm-up: scratch buffers, page faults, the pool's threads
  Timing best{1e30, 1e30};
  for (int batch = 0; batch < g_batches; ++batch) {
    int reps = 0;
    auto start = clock::now();
    double cpu_start = cpu_seconds();
    double elapsed = 0;
    do {
      fn();
      ++reps;
      elapsed = std::chrono::duration<double>(clock::now() - start).count();
    } while (elapsed < g_min_seconds);
    best.wall_us = std::min(best.wall_us, elapsed / reps * 1e6);
    best.cpu_us = std::min(best.cpu_us, (cpu_seconds() - cpu_start) / reps * 1e6);
  }
  return best;
}

struct Layer {
  const char* name;
  int64_t c, h, w, o, k, pad;
};

Conv2dGeometry geometry(const Layer& l, int64_t batch) {
  Conv2dGeometry g;
  g.batch = batch;
  g.in_channels = l.c;
  g.in_h = l.h;
  g.in_w = l.w;
  g.out_channels = l.o;
  g.kernel_h = g.kernel_w = l.k;
  g.pad_h = g.pad_w = l.pad;
  g.out_h = l.h + 2 * l.pad - l.k + 1;
  g.out_w = l.w + 2 * l.pad - l.k + 1;
  return g;
}

struct Times {
  Timing fwd, bwd_input, bwd_weight;
};

Times time_layer(const Layer& l, int64_t batch, ConvAlgorithm algo, colony::DType dt = colony::kFloat32) {
  const Conv2dGeometry g = geometry(l, batch);
  colony::Generator gen(7);
  const auto f32 = colony::TensorOptions(dt);
  Tensor x = raw::randn({batch, l.c, l.h, l.w}, f32, &gen);
  Tensor w = raw::randn({l.o, l.c, l.k, l.k}, f32, &gen);
  Tensor b = raw::randn({l.o}, f32, &gen);
  Tensor y = raw::empty({batch, l.o, g.out_h, g.out_w}, f32);
  Tensor gy = raw::randn(y.sizes(), f32, &gen);
  Tensor gx = raw::empty(x.sizes(), f32), gw = raw::empty(w.sizes(), f32), gb = raw::empty(b.sizes(), f32);
  Times t;
  t.fwd = best_us([&] {
    cpu::conv2d_forward(dt, g, x.data_ptr_raw(), w.data_ptr_raw(), b.data_ptr_raw(), y.data_ptr_raw(), algo);
  });
  t.bwd_input = best_us([&] {
    cpu::conv2d_backward(dt, g, gy.data_ptr_raw(), nullptr, w.data_ptr_raw(), gx.data_ptr_raw(), nullptr, nullptr,
                         algo);
  });
  t.bwd_weight = best_us([&] {
    cpu::conv2d_backward(dt, g, gy.data_ptr_raw(), x.data_ptr_raw(), nullptr, nullptr, gw.data_ptr_raw(),
                         gb.data_ptr_raw(), algo);
  });
  return t;
}

struct PoolTimes {
  Timing fwd, bwd;
};

PoolTimes time_pool(int64_t batch, int64_t c, int64_t hw) {
  colony::Generator gen(9);
  Tensor x = raw::randn({batch, c, hw, hw}, colony::TensorOptions(colony::kFloat32), &gen);
  raw::MaxPool2dResult r = raw::max_pool2d(x, 2);
  Tensor gy = raw::randn(r.output.sizes(), colony::TensorOptions(colony::kFloat32), &gen);
  PoolTimes t;
  t.fwd = best_us([&] { raw::max_pool2d(x, 2); });
  t.bwd = best_us([&] { raw::max_pool2d_backward(gy, r.indices, x.sizes()); });
  return t;
}

// A layer's forward and both gradients through the front functions (raw::conv2d and
// raw::conv2d_backward, allocation included), as a network in `dtype` calls them.
Timing time_front(const Layer& l, int64_t batch, colony::DType dtype) {
  colony::Generator gen(11);
  const auto opts = colony::TensorOptions(dtype);
  Tensor x = raw::randn({batch, l.c, l.h, l.w}, opts, &gen);
  Tensor w = raw::randn({l.o, l.c, l.k, l.k}, opts, &gen);
  Tensor b = raw::randn({l.o}, opts, &gen);
  const Conv2dGeometry g = geometry(l, batch);
  Tensor gy = raw::randn({batch, l.o, g.out_h, g.out_w}, opts, &gen);
  return best_us([&] {
    raw::conv2d(x, w, b, 1, l.pad);
    raw::conv2d_backward(gy, x, w, {1, l.pad, 1, 1});
  });
}

const char* algo_name(ConvAlgorithm a) {
  if (a == ConvAlgorithm::AmxPixels) return "amx_px";
  return a == ConvAlgorithm::Direct ? "direct" : a == ConvAlgorithm::Amx ? "amx" : "im2col";
}

std::string cell(const Timing& t) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%8.1f (%7.1f)", t.wall_us, t.cpu_us);
  return buf;
}

const Layer conv1{"conv1 3->6 k5 32x32", 3, 32, 32, 6, 5, 0};
const Layer conv2{"conv2 6->16 k5 14x14", 6, 14, 14, 16, 5, 0};
const Layer wide32{"conv 32->32 k3 16x16", 32, 16, 16, 32, 3, 1};
const Layer wide64{"conv 64->64 k3 16x16", 64, 16, 16, 64, 3, 1};

void bf16_passes() {
  // bfloat16's two kinds of tiles per pass: what set conv2d_bf16_on_amx's thresholds (conv.cc).
  const Layer wide16{"conv 16->16 k3 16x16", 16, 16, 16, 16, 3, 1};
  std::printf("\nbfloat16 kernels per pass, AVX512_BF16 direct tiles against AMX tiles, %d thread(s); Auto picks\n",
              colony::get_num_threads());
  std::printf("%-22s %-7s %5s %18s %18s %18s\n", "layer", "algo", "batch", "forward", "backward_input",
              "backward_weight");
  for (int64_t batch : {32, 128}) {
    for (const Layer& l : {conv1, conv2, wide16, wide32, wide64}) {
      for (ConvAlgorithm algo : {ConvAlgorithm::Direct, ConvAlgorithm::Amx, ConvAlgorithm::AmxPixels}) {
        Times t = time_layer(l, batch, algo, colony::kBFloat16);
        std::printf("%-22s %-7s %5lld %18s %18s %18s\n", l.name, algo_name(algo), static_cast<long long>(batch),
                    cell(t.fwd).c_str(), cell(t.bwd_input).c_str(), cell(t.bwd_weight).c_str());
      }
      const Conv2dGeometry g = geometry(l, batch);
      auto pick = [&](cpu::ConvPass pass) { return cpu::conv2d_bf16_on_amx(g, pass) ? "amx" : "direct"; };
      const char* forward = cpu::conv2d_bf16_pixels(g) ? "amx_px" : pick(cpu::ConvPass::Forward);
      const char* input = cpu::conv2d_bf16_pixels_input(g) ? "amx_px" : pick(cpu::ConvPass::BackwardInput);
      std::printf("%-22s %-7s %5s %18s %18s %18s\n", "", "Auto", "", forward, input,
                  pick(cpu::ConvPass::BackwardWeight));
    }
  }
}

// One layer's forward alone at batch 32 in `dtype` through `algo`.
Timing time_forward(const Layer& l, colony::DType dtype, ConvAlgorithm algo) {
  const Conv2dGeometry g = geometry(l, 32);
  colony::Generator gen(7);
  const auto opts = colony::TensorOptions(dtype);
  Tensor x = raw::randn({32, l.c, l.h, l.w}, opts, &gen);
  Tensor w = raw::randn({l.o, l.c, l.k, l.k}, opts, &gen);
  Tensor b = raw::randn({l.o}, opts, &gen);
  Tensor y = raw::empty({32, l.o, g.out_h, g.out_w}, opts);
  return best_us([&] {
    cpu::conv2d_forward(dtype, g, x.data_ptr_raw(), w.data_ptr_raw(), b.data_ptr_raw(), y.data_ptr_raw(), algo);
  });
}

// The forward alone, float32 direct against bfloat16 on each kind of tile, LeNet's layers at batch
// 32, in alternating rounds (`--pixels`): what set the pixel-major AMX forward's threshold
// (conv2d_bf16_on_amx, kernels/cpu/conv.cc).
void pixels_forward(int rounds) {
  struct Entry {
    const char* name;
    colony::DType dtype;
    ConvAlgorithm algo;
  };
  const Entry entries[] = {{"float32 direct", colony::kFloat32, ConvAlgorithm::Direct},
                           {"bf16 avx512_bf16", colony::kBFloat16, ConvAlgorithm::Direct},
                           {"bf16 amx", colony::kBFloat16, ConvAlgorithm::Amx},
                           {"bf16 amx_pixels", colony::kBFloat16, ConvAlgorithm::AmxPixels}};
  std::printf("forward, batch 32, %d thread(s), us per call: best wall (CPU of all threads)\n",
              colony::get_num_threads());
  for (int r = 0; r < rounds; ++r) {
    for (const Layer& l : {conv1, conv2}) {
      for (const Entry& e : entries) {
        const Timing t = time_forward(l, e.dtype, e.algo);
        std::printf("round %d  %-22s %-18s %s\n", r, l.name, e.name, cell(t).c_str());
      }
    }
  }
}

// The forward alone with the output channels on the AMX tiles' rows (conv_channels.h) against
// Auto without that product (the base's choice: LeNet's conv1 widened to float32, conv2 on the
// pixel path), the pixel path forced, and float32, batch 32, 1 thread, in alternating rounds
// (`--channels`): what set conv2d_bf16_channels (kernels/cpu/conv.cc).
void channels_forward(int rounds, const char* only) {
  const Layer wide16{"conv 16->16 k3 16x16", 16, 16, 16, 16, 3, 1};
  const Layer first3x3{"conv 3->8 k3 32x32", 3, 32, 32, 8, 3, 1};
  struct Entry {
    const char* name;
    colony::DType dtype;
    ConvAlgorithm algo;
    bool channels;  // the channel-major product available to Auto
  };
  const Entry entries[] = {{"float32 auto", colony::kFloat32, ConvAlgorithm::Auto, false},
                           {"bf16 auto w/o channels", colony::kBFloat16, ConvAlgorithm::Auto, false},
                           {"bf16 amx_pixels", colony::kBFloat16, ConvAlgorithm::AmxPixels, false},
                           {"bf16 amx_channels", colony::kBFloat16, ConvAlgorithm::AmxChannels, true},
                           {"bf16 auto", colony::kBFloat16, ConvAlgorithm::Auto, true}};
  std::printf("forward, batch 32, %d thread(s), us per call: best wall (CPU of all threads)\n",
              colony::get_num_threads());
  for (int r = 0; r < rounds; ++r) {
    for (const Layer& l : {conv1, first3x3, conv2, wide16, wide32}) {
      if (only != nullptr && std::strncmp(l.name, only, std::strlen(only)) != 0) continue;
      for (const Entry& e : entries) {
        cpu::ScopedConvChannelsFns use(e.channels ? cpu::active_conv_channels_fns() : nullptr);
        const Timing t = time_forward(l, e.dtype, e.algo);
        std::printf("round %d  %-22s %-24s %s\n", r, l.name, e.name, cell(t).c_str());
      }
      // A float32 x (autocast's input to a first layer): rounded to a bfloat16 copy first, as
      // autocast does today, or rounded by the channel-major forward as it builds its layouts.
      const Conv2dGeometry g = geometry(l, 32);
      colony::Generator gen(7);
      Tensor x32 = raw::randn({32, l.c, l.h, l.w}, colony::TensorOptions(colony::kFloat32), &gen);
      Tensor x16 = raw::empty(x32.sizes(), colony::TensorOptions(colony::kBFloat16));
      const auto opts = colony::TensorOptions(colony::kBFloat16);
      Tensor w = raw::randn({l.o, l.c, l.k, l.k}, opts, &gen), b = raw::randn({l.o}, opts, &gen);
      Tensor y = raw::empty({32, l.o, g.out_h, g.out_w}, opts);
      const auto* xf = static_cast<const float*>(x32.data_ptr_raw());
      auto* xb = static_cast<colony::BFloat16*>(x16.data_ptr_raw());
      const auto* wb = static_cast<const colony::BFloat16*>(w.data_ptr_raw());
      const auto* bb = static_cast<const colony::BFloat16*>(b.data_ptr_raw());
      auto* yb = static_cast<colony::BFloat16*>(y.data_ptr_raw());
      const Timing copy = best_us([&] {
        cpu::round_to_bf16_parallel(xf, x32.numel(), xb);
        cpu::conv2d_forward_channels(g, xb, wb, bb, yb);
      });
      std::printf("round %d  %-22s %-24s %s\n", r, l.name, "f32 x rounded, channels", cell(copy).c_str());
      const Timing fused = best_us([&] { cpu::conv2d_forward_channels(g, xf, wb, bb, yb); });
      std::printf("round %d  %-22s %-24s %s\n", r, l.name, "f32 x into channels", cell(fused).c_str());
    }
  }
}

// The bfloat16 weight gradient alone (no bias, no input gradient: a first layer's), batch 32, in
// alternating rounds (`--weight-rows`): Auto's other paths (conv_weight_rows.h's product switched
// off) against that product over the whole batch with its sums rounded once, as backward_bf16 runs
// it on one thread. What set conv2d_bf16_weight_rows (kernels/cpu/conv.cc).
void weight_rows(int rounds) {
  const cpu::ConvWeightRowsFns* rows = cpu::active_conv_weight_rows_fns();
  const Layer wide16{"conv 16->16 k3 16x16", 16, 16, 16, 16, 3, 1};
  const Layer wide16_28{"conv 16->16 k3 28x28", 16, 28, 28, 16, 3, 1};
  std::printf("bfloat16 weight gradient, batch 32, %d thread(s), us per call: best wall (CPU of all threads)\n",
              colony::get_num_threads());
  for (int r = 0; r < rounds; ++r) {
    for (const Layer& l : {conv1, conv2, wide16, wide16_28, wide32, wide64}) {
      const Conv2dGeometry g = geometry(l, 32);
      colony::Generator gen(7);
      const auto opts = colony::TensorOptions(colony::kBFloat16);
      Tensor x = raw::randn({32, l.c, l.h, l.w}, opts, &gen);
      Tensor gy = raw::randn({32, l.o, g.out_h, g.out_w}, opts, &gen);
      Tensor gw = raw::empty({l.o, l.c, l.k, l.k}, opts);
      std::vector<float> sums(gw.numel());
      Timing other, tiles;
      {
        cpu::ScopedConvWeightRowsFns off(nullptr);
        other = best_us([&] {
          cpu::conv2d_backward(colony::kBFloat16, g, gy.data_ptr_raw(), x.data_ptr_raw(), nullptr, nullptr,
                               gw.data_ptr_raw(), nullptr);
        });
      }
      tiles = best_us([&] {
        std::fill(sums.begin(), sums.end(), 0.0f);
        cpu::conv_weight_rows_accumulate(g, static_cast<const colony::BFloat16*>(gy.data_ptr_raw()),
                                         static_cast<const colony::BFloat16*>(x.data_ptr_raw()), 0, 32, sums.data());
        auto* out = static_cast<colony::BFloat16*>(gw.data_ptr_raw());
        for (size_t e = 0; e < sums.size(); ++e) out[e] = colony::BFloat16(sums[e]);
      });
      std::printf("round %d  %-22s auto %s  %-18s  rows(%s) %s\n", r, l.name,
                  cpu::conv2d_bf16_weight_rows(g) ? "(rows)" : "(other)", cell(other).c_str(), rows->isa,
                  cell(tiles).c_str());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--channels") == 0) {
      if (!cpu::has_bf16_small_gemm() || cpu::active_conv_channels_fns() == nullptr) {
        std::printf("--channels: needs AVX512_BF16 and AMX-BF16 active\n");
        return 1;
      }
      colony::set_num_threads(1);
      channels_forward(i + 1 < argc ? std::atoi(argv[i + 1]) : 3, i + 2 < argc ? argv[i + 2] : nullptr);
      return 0;
    }
    if (std::strcmp(argv[i], "--pixels") == 0) {
      if (!cpu::has_bf16_small_gemm() || !cpu::has_amx_gemm()) {
        std::printf("--pixels: needs AVX512_BF16 and AMX-BF16 active\n");
        return 1;
      }
      colony::set_num_threads(1);
      pixels_forward(3);
      return 0;
    }
    if (std::strcmp(argv[i], "--weight-rows") == 0) {
      if (cpu::active_conv_weight_rows_fns() == nullptr) {
        std::printf("--weight-rows: needs AMX-BF16 active\n");
        return 1;
      }
      colony::set_num_threads(1);
      weight_rows(i + 1 < argc ? std::max(1, std::atoi(argv[i + 1])) : 3);
      return 0;
    }
    if (std::strcmp(argv[i], "--bf16") == 0) {
      if (!cpu::has_bf16_small_gemm() || !cpu::has_amx_gemm()) {
        std::printf("--bf16: needs AVX512_BF16 and AMX-BF16 active\n");
        return 1;
      }
      colony::set_num_threads(i + 1 < argc && std::strcmp(argv[i + 1], "--one-thread") == 0 ? 1 : 2);
      bf16_passes();
      return 0;
    }
    if (std::strcmp(argv[i], "--quick") == 0) {
      g_min_seconds = 0.03;
      g_batches = 3;
    }
  }
  std::printf("microseconds per call: best wall time (CPU time of all threads in parentheses)\n\n");
  std::printf("%-22s %-7s %5s %7s %18s %18s %18s\n", "layer", "algo", "batch", "threads", "forward", "backward_input",
              "backward_weight");
  // LeNet's convolution training step per [algo][batch][threads]: wall and CPU microseconds
  Timing step[2][2][2] = {};
  for (int bi = 0; bi < 2; ++bi) {
    const int64_t batch = bi == 0 ? 32 : 128;
    for (int threads : {1, 2}) {
      colony::set_num_threads(threads);
      for (int ai = 0; ai < 2; ++ai) {
        const ConvAlgorithm algo = ai == 0 ? ConvAlgorithm::Direct : ConvAlgorithm::Im2col;
        Times t1 = time_layer(conv1, batch, algo), t2 = time_layer(conv2, batch, algo);
        for (const auto& [layer, t] : {std::make_pair(conv1, t1), std::make_pair(conv2, t2)}) {
          std::printf("%-22s %-7s %5lld %7d %18s %18s %18s\n", layer.name, algo_name(algo),
                      static_cast<long long>(batch), threads, cell(t.fwd).c_str(), cell(t.bwd_input).c_str(),
                      cell(t.bwd_weight).c_str());
        }
        Timing& st = step[ai][bi][threads - 1];
        for (const Timing* part : {&t1.fwd, &t1.bwd_weight, &t2.fwd, &t2.bwd_input, &t2.bwd_weight}) {
          st.wall_us += part->wall_us;
          st.cpu_us += part->cpu_us;
        }
      }
    }
  }
  std::printf("\n%-22s %5s %7s %18s %18s\n", "maxpool 2x2 input", "batch", "threads", "forward", "backward");
  for (int64_t batch : {32, 128}) {
    for (int threads : {1, 2}) {
      colony::set_num_threads(threads);
      for (const auto& [c, hw] : {std::make_pair(6, 28), std::make_pair(16, 10)}) {
        PoolTimes t = time_pool(batch, c, hw);
        std::string shape = std::to_string(c) + "x" + std::to_string(hw) + "x" + std::to_string(hw);
        std::printf("%-22s %5lld %7d %18s %18s\n", shape.c_str(), static_cast<long long>(batch), threads,
                    cell(t.fwd).c_str(), cell(t.bwd).c_str());
      }
    }
  }
  std::printf("\nLeNet conv training step (conv1 forward + backward_weight, conv2 forward + backward_input +"
              " backward_weight);\nimages/s from the wall time, and from CPU time / threads (an idle machine):\n");
  for (int bi = 0; bi < 2; ++bi) {
    const int64_t batch = bi == 0 ? 32 : 128;
    for (int threads : {1, 2}) {
      for (int ai = 0; ai < 2; ++ai) {
        const Timing& st = step[ai][bi][threads - 1];
        std::printf("  %-7s batch %3lld threads %d: %8.1f us %8.0f images/s   cpu %8.1f us %8.0f images/s\n",
                    ai == 0 ? "direct" : "im2col", static_cast<long long>(batch), threads, st.wall_us,
                    batch / (st.wall_us * 1e-6), st.cpu_us, batch * threads / (st.cpu_us * 1e-6));
      }
    }
  }
  std::printf("\nWider layers, batch 32, 2 threads; Auto picks (forward / backward_input / backward_weight):\n");
  for (const Layer& l : {wide32, wide64}) {
    const Conv2dGeometry g = geometry(l, 32);
    std::printf("  %s: %s / %s / %s\n", l.name, algo_name(cpu::choose_conv_algorithm(g, cpu::ConvPass::Forward)),
                algo_name(cpu::choose_conv_algorithm(g, cpu::ConvPass::BackwardInput)),
                algo_name(cpu::choose_conv_algorithm(g, cpu::ConvPass::BackwardWeight)));
  }
  colony::set_num_threads(2);
  for (const Layer& l : {wide32, wide64}) {
    for (ConvAlgorithm algo : {ConvAlgorithm::Direct, ConvAlgorithm::Im2col}) {
      Times t = time_layer(l, 32, algo);
      std::printf("%-22s %-7s %18s %18s %18s\n", l.name, algo_name(algo), cell(t.fwd).c_str(),
                  cell(t.bwd_input).c_str(), cell(t.bwd_weight).c_str());
    }
  }
  const bool native = cpu::has_bf16_small_gemm();
  std::printf("\nbfloat16, forward + backward (input and weight) through the front functions, 2 threads;\n"
              "bfloat16 tiles: %s\n",
              native ? cpu::active_small_gemm_bf16_fns()->isa : "none on this CPU (AVX512_BF16 absent or capped)");
  std::printf("%-22s %5s %18s %18s %18s\n", "layer", "batch", "float32", "bf16 widened", "bf16 native");
  for (int64_t batch : {32, 128}) {
    for (const Layer& l : {conv1, conv2, wide32}) {
      const Timing f32 = time_front(l, batch, colony::kFloat32);
      Timing widened;
      {
        cpu::ScopedSmallGemmBf16Fns none(nullptr);
        widened = time_front(l, batch, colony::kBFloat16);
      }
      const std::string bf16 = native ? cell(time_front(l, batch, colony::kBFloat16)) : std::string("-");
      std::printf("%-22s %5lld %18s %18s %18s\n", l.name, static_cast<long long>(batch), cell(f32).c_str(),
                  cell(widened).c_str(), bf16.c_str());
    }
  }
  if (native && cpu::has_amx_gemm()) bf16_passes();
  return 0;
}
