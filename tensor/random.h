// Seeded random number generation. Numbers come from Philox4x32-10 (kernels/common/philox.h) keyed
// by the seed and indexed by a counter, so CPU and CUDA draw the same values for the same seed (normals up to libm rounding) and
// the result does not depend on how many threads ran the kernel: manual_seed(s) makes runs
// bit-identical.
#pragma once

#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>

#include "kernels/common/random_fill.h"
#include "runtime/device.h"

namespace colony {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL) : seed_(seed) {}
  void manual_seed(uint64_t seed);
  uint64_t seed() const;
  // Reserves `n` 128-bit Philox blocks and returns the counter of the first; each draw of a kernel
  // uses its own block, so concurrent users never overlap.
  uint64_t reserve(uint64_t n);
  // For checkpoints: the whole state is (seed, offset).
  uint64_t offset() const;
  void set_state(uint64_t seed, uint64_t offset);

  // What a kernel on `device` draws `n` blocks with (random_ops.cc): the (seed, offset) of now,
  // advancing the offset by n; or, on the thread that captures a CUDA graph on `device` with this
  // generator, the graph's device-memory state and the draw's place within one replay (the offset
  // does not move: the replays move it). A draw for the CPU on that thread during the capture
  // throws: it would happen once, at capture, and never again at replay.
  kernels::PhiloxArgs philox_args(uint64_t n, Device device);

  // CUDA graphs (ops/cuda_graph.cc), as PyTorch's graph-safe CUDA generator. Between begin and
  // end, the calling thread's draws on `device` read (seed, base offset) from `state`, two uint64
  // in that device's memory; one capture at a time per generator.
  void graph_capture_begin(Device device, const uint64_t* state);
  // Ends the capture; returns the blocks one replay draws.
  uint64_t graph_capture_end();
  // Before a replay that draws `blocks`: the (seed, offset) it starts from, which it reserves, so
  // replays and eager draws interleave exactly as eager steps would.
  std::pair<uint64_t, uint64_t> graph_replay_state(uint64_t blocks);

 private:
  struct Capture {
    std::thread::id thread;
    Device device;
    const uint64_t* state = nullptr;  // nullptr: no capture
    uint64_t blocks = 0;              // drawn so far within one replay
  };
  mutable std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
  Capture capture_;
};

// The generator every random op uses when none is given.
Generator& default_generator();
// Seeds the default generator (torch.manual_seed).
void manual_seed(uint64_t seed);

}  // namespace colony
