// CUDAGraph and make_graphed_step (see cuda_graph.h for what a capture relies on and why).
#include "ops/cuda_graph.h"

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "runtime/caching_allocator.h"
#include "runtime/cuda.h"
#include "ops/raw_ops.h"

#ifdef COLONY_WITH_CUDA
#include "kernels/cuda/random.h"
#include "runtime/cuda/runtime.h"
#endif

namespace colony::cuda {
namespace {

thread_local CUDAGraph* capturing_graph = nullptr;

// make_graphed_step's side stream of `device`, made once and reused: streams live as long as the
// process (stream.h).
Stream side_stream(Device device) {
  static std::mutex mu;
  static auto* streams = new std::map<int, Stream>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = streams->find(device.index);
  if (it == streams->end()) it = streams->emplace(device.index, new_stream(device)).first;
  return it->second;
}

}  // namespace

CUDAGraph* CUDAGraph::capturing() { return capturing_graph; }

CUDAGraph::~CUDAGraph() {
  try {
    reset();
  } catch (...) {
    // At process exit the runtime may be gone; the graph dies with it.
  }
}

void CUDAGraph::add_replay_prologue(std::function<void()> fn) {
  if (capturing_graph != this) {
    throw std::logic_error("CUDAGraph::add_replay_prologue: only code running inside this graph's capture may add one");
  }
  prologues_.push_back(std::move(fn));
}

#ifdef COLONY_WITH_CUDA

void CUDAGraph::capture_begin(Generator* gen) {
  const int index = current_device();
  if (captured() || stream_ != nullptr) {
    throw std::logic_error("CUDAGraph::capture_begin: the graph already holds a capture; reset() it first");
  }
  if (capturing_graph != nullptr) {
    throw std::logic_error("CUDAGraph::capture_begin: this thread is already capturing a graph (captures do not nest)");
  }
  const Device device = Device::cuda(index);
  const Stream stream = current_stream(device);
  if (stream.handle() == nullptr) {
    throw std::invalid_argument("CUDAGraph::capture_begin: the current stream of " + device.str() +
                                " is the legacy default stream, which cannot be captured; capture under a "
                                "StreamGuard(new_stream(" + device.str() + ")) or use make_graphed_step");
  }
  gen_ = gen ? gen : &default_generator();
  // Made before the capture, from the eager pool: replay() writes it on the replay stream.
  philox_state_ = raw::zeros({2}, TensorOptions(kInt64).device(device));
  const auto* state = static_cast<const uint64_t*>(philox_state_.data_ptr_raw());
  gen_->graph_capture_begin(device, state);
  try {
    kernels::cuda::stream_begin_capture(stream.handle());
  } catch (...) {
    gen_->graph_capture_end();
    throw;
  }
  device_ = device;
  stream_ = stream.handle();
  capture_id_ = kernels::cuda::stream_capture_id(stream_);
  cuda_caching_allocator(index)->begin_capture(capture_id_);
  capturing_graph = this;
}

// Undoes what capture_begin set up, whatever happened to the capture itself.
void CUDAGraph::end_capture_state() noexcept {
  capturing_graph = nullptr;
  try {
    philox_blocks_ = gen_->graph_capture_end();
  } catch (...) {
  }
  try {
    cuda_caching_allocator(device_.index)->end_capture(capture_id_);
  } catch (...) {
  }
  stream_ = nullptr;
}

void CUDAGraph::capture_end() {
  if (capturing_graph != this) throw std::logic_error("CUDAGraph::capture_end: this graph is not being captured");
  DeviceGuard guard(device_.index);
  void* graph = nullptr;
  try {
    graph = kernels::cuda::stream_end_capture(stream_);
  } catch (...) {
    end_capture_state();
    reset();
    throw;
  }
  void* const home = stream_;
  end_capture_state();
  graph_ = graph;
  try {
    exec_ = kernels::cuda::graph_instantiate(graph_);
  } catch (...) {
    reset();
    throw;
  }
  home_stream_ = home;
}

void CUDAGraph::discard_capture() noexcept {
  if (capturing_graph != this) return;
  try {
    DeviceGuard guard(device_.index);
    void* graph = kernels::cuda::stream_end_capture(stream_);
    if (graph) kernels::cuda::graph_destroy(graph);
  } catch (...) {
    // An invalidated capture has no graph; the capture is over either way.
  }
  end_capture_state();
  try {
    reset();
  } catch (...) {
  }
}

void CUDAGraph::replay() {
  if (!captured()) throw std::logic_error("CUDAGraph::replay: nothing captured (capture_begin/capture_end first)");
  DeviceGuard guard(device_.index);
  const Stream stream = current_stream(device_);
  const Stream home(device_, home_stream_);
  const bool elsewhere = stream.handle() != home_stream_;
  if (elsewhere) {
    // The captured cuBLAS calls use the capture stream's workspace (kernels/cuda/blas.cc), which
    // eager work on that stream uses too; the graph's memory and Philox state are the same for
    // every replay, wherever it runs. So this replay waits for the capture stream, and the
    // capture stream for this replay: a later replay elsewhere waits for this one through it.
    home_ready_.record(home);
    home_ready_.wait(stream);
  }
  for (auto& fn : prologues_) fn();
  const auto [seed, offset] = gen_->graph_replay_state(philox_blocks_);
  kernels::cuda::set_philox_state(static_cast<uint64_t*>(philox_state_.data_ptr_raw()), seed, offset,
                                  stream.handle());
  kernels::cuda::graph_launch(exec_, stream.handle());
  if (elsewhere) {
    replay_done_.record(stream);
    replay_done_.wait(home);
  }
}

void CUDAGraph::reset() {
  if (capturing_graph == this) {
    throw std::logic_error("CUDAGraph::reset: the graph is being captured (capture_end or discard_capture first)");
  }
  if (device_.is_cpu()) return;  // never captured
  DeviceGuard guard(device_.index);
  if (exec_) kernels::cuda::graph_exec_destroy(exec_);
  if (graph_) kernels::cuda::graph_destroy(graph_);
  exec_ = graph_ = nullptr;
  home_stream_ = nullptr;
  home_ready_ = Event(/*enable_timing=*/false);
  replay_done_ = Event(/*enable_timing=*/false);
  prologues_.clear();
  philox_state_ = Tensor();
  if (capture_id_ != 0) cuda_caching_allocator(device_.index)->release_pool(capture_id_);
  capture_id_ = 0;
  device_ = kCPU;
}

#else  // Without CUDA there is nothing to capture: every entry point says why.

void CUDAGraph::capture_begin(Generator*) { check_device(0, "CUDAGraph::capture_begin"); }
void CUDAGraph::capture_end() { check_device(0, "CUDAGraph::capture_end"); }
void CUDAGraph::discard_capture() noexcept {}
void CUDAGraph::replay() { check_device(0, "CUDAGraph::replay"); }
void CUDAGraph::reset() {}
void CUDAGraph::end_capture_state() noexcept {}

#endif

GraphedStep make_graphed_step(const std::function<void()>& step, Device device, int warmup) {
  if (!device.is_cuda()) {
    throw std::invalid_argument("make_graphed_step: CUDA graphs need a CUDA device, got " + device.str());
  }
  check_device(device.index, "make_graphed_step(" + device.str() + ")");
  if (warmup < 1) {
    throw std::invalid_argument("make_graphed_step: warmup must be at least 1 (lazy state such as momentum "
                                "buffers and cuDNN's algorithm choice must exist before the capture), got " +
                                std::to_string(warmup));
  }
  DeviceGuard guard(device.index);
  const Stream side = side_stream(device);
  const Stream caller = current_stream(device);
  Event ready(/*enable_timing=*/false);
  ready.record(caller);
  ready.wait(side);

  GraphedStep out;
  out.graph_ = std::make_unique<CUDAGraph>();
  {
    StreamGuard on_side(side);
    for (int i = 0; i < warmup; ++i) step();
    out.graph_->capture_begin();
    try {
      step();
    } catch (...) {
      out.graph_->discard_capture();
      throw;
    }
    out.graph_->capture_end();
  }
  Event done(/*enable_timing=*/false);
  done.record(side);
  done.wait(caller);
  return out;
}

}  // namespace colony::cuda
