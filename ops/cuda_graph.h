// Whole steps as CUDA graphs: a step's kernels are captured once and replayed with one launch,
// which removes the per-kernel launch cost that dominates small models (PyTorch's
// torch.cuda.CUDAGraph and torch.cuda.graph, made one call by make_graphed_step below).
//
// What a capture relies on (each part says why it is safe to replay):
//  - memory: the capture allocates from a private pool of the caching allocator
//    (CachingAllocator::begin_capture), so every address the graph uses stays reserved for it
//    until reset(); tensors made inside the step (the loss, new gradients) are the graph's and are
//    overwritten by each replay;
//  - random numbers: the generator hands the captured kernels a Philox state in device memory
//    (Generator::graph_capture_begin); replay() writes the generator's seed and offset there and
//    advances the offset by what one step draws, so each replay draws what an eager step would;
//  - host syncs: the capturing thread may not wait for the device (runtime/cuda/capture_state.h):
//    item(), to(kCPU), synchronize() inside the step throw, naming the op;
//  - hyper-parameters: kernels take their scalars by value, so a captured step keeps them, except
//    those read from device memory before each replay (add_replay_prologue; SGD's learning rate).
//
// The graph reads and writes tensors that existed before the capture (parameters, optimizer
// state, the static inputs) at their addresses: they must stay alive, and be updated in place
// (copy_), as long as the graph is replayed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "tensor/random.h"
#include "runtime/stream.h"
#include "tensor/tensor.h"

namespace colony::cuda {

class CUDAGraph {
 public:
  CUDAGraph() = default;
  ~CUDAGraph();  // reset(), errors swallowed
  CUDAGraph(const CUDAGraph&) = delete;
  CUDAGraph& operator=(const CUDAGraph&) = delete;

  // Starts capturing the work this thread queues on the current stream of the current device,
  // which must be a stream made with new_stream (the legacy default stream cannot be captured).
  // Random draws on that device use `gen` (default_generator() when null), which must outlive the
  // graph. Throws when already captured (reset() first).
  void capture_begin(Generator* gen = nullptr);
  // Ends the capture and instantiates the graph. When the capture failed (an illegal call
  // invalidated it), throws and leaves the graph empty.
  void capture_end();
  // Ends a capture that failed in the captured code, dropping what was recorded; never throws.
  void discard_capture() noexcept;
  // Runs the replay prologues, writes the Philox state, and launches the graph on the current
  // stream of the graph's device. On another stream than the capture's, the replay is ordered
  // after the work queued on the capture stream so far, and that stream's later work after it:
  // the graph's cuBLAS calls use the capture stream's workspace, and every replay shares the
  // graph's memory and Philox state.
  void replay();
  // Destroys the graph and releases its memory pool.
  void reset();

  bool captured() const { return exec_ != nullptr; }
  Device device() const { return device_; }

  // Called during the capture by code whose captured kernels read values from device memory that
  // must be brought up to date before each replay (SGD's learning rate): `fn` runs at every
  // replay, on the replaying thread, before the launch, with the replay stream current.
  void add_replay_prologue(std::function<void()> fn);
  // The graph this thread is capturing, or nullptr.
  static CUDAGraph* capturing();

 private:
  void end_capture_state() noexcept;

  Device device_ = kCPU;
  void* stream_ = nullptr;     // the capture stream, while capturing
  void* home_stream_ = nullptr;  // the stream it was captured on, once captured
  Event home_ready_{/*enable_timing=*/false};   // replay() on another stream: orders it after the
  Event replay_done_{/*enable_timing=*/false};  // capture stream's work, and that stream after it
  uint64_t capture_id_ = 0;    // also the id of the allocator's private pool
  void* graph_ = nullptr;      // cudaGraph_t
  void* exec_ = nullptr;       // cudaGraphExec_t
  Generator* gen_ = nullptr;
  Tensor philox_state_;        // two uint64 on the device: seed, base offset
  uint64_t philox_blocks_ = 0; // drawn by one replay
  std::vector<std::function<void()>> prologues_;
};

// A training step captured as one graph (make_graphed_step). replay() runs it.
class GraphedStep {
 public:
  void replay() {
    if (!graph_) throw std::logic_error("GraphedStep::replay: empty (made by make_graphed_step?)");
    graph_->replay();
  }

 private:
  friend GraphedStep make_graphed_step(const std::function<void()>& step, Device device, int warmup);
  std::unique_ptr<CUDAGraph> graph_;
};

// One call for the whole recipe (PyTorch's "whole network capture"):
//  1. `warmup` eager calls of `step` on a side stream of `device` (at least 1: cuBLAS workspaces,
//     cuDNN algorithm choice and lazily made optimizer state such as momentum buffers must exist
//     before the capture; these are real steps and update the model as eager steps would);
//  2. one call captured on that stream (it does not run: the model is unchanged by it);
//  3. the current stream waits for the side stream, so later work sees the warm-up's results.
// `step` reads its inputs from static tensors made before this call, into which each batch is
// copied (x.copy_(batch)) before replay(); what it computes (the loss) it keeps in tensors it
// assigns during the capture, which each replay overwrites. An exception from `step` during the
// capture (e.g. a host read) discards the capture and propagates.
GraphedStep make_graphed_step(const std::function<void()>& step, Device device, int warmup = 3);

}  // namespace colony::cuda
