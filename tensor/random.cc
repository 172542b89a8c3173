#include "tensor/random.h"

#include <stdexcept>
#include <string>

namespace colony {

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lk(mu_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::seed() const {
  std::lock_guard<std::mutex> lk(mu_);
  return seed_;
}

uint64_t Generator::reserve(uint64_t n) {
  std::lock_guard<std::mutex> lk(mu_);
  uint64_t first = offset_;
  offset_ += n;
  return first;
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> lk(mu_);
  return offset_;
}

void Generator::set_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> lk(mu_);
  seed_ = seed;
  offset_ = offset;
}

kernels::PhiloxArgs Generator::philox_args(uint64_t n, Device device) {
  std::lock_guard<std::mutex> lk(mu_);
  kernels::PhiloxArgs args;
  if (capture_.state != nullptr && capture_.thread == std::this_thread::get_id()) {
    if (device != capture_.device) {
      throw std::runtime_error("random draw on " + device.str() + " while this thread captures a CUDA graph on " +
                               capture_.device.str() + ": it would be drawn once, at capture, instead of at every "
                               "replay; draw it outside the captured step");
    }
    args.seed_ptr = capture_.state;
    args.base_ptr = capture_.state + 1;
    args.offset = capture_.blocks;
    capture_.blocks += n;
    return args;
  }
  args.seed = seed_;
  args.offset = offset_;
  offset_ += n;
  return args;
}

void Generator::graph_capture_begin(Device device, const uint64_t* state) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!device.is_cuda() || state == nullptr) {
    throw std::invalid_argument("Generator::graph_capture_begin: expects a CUDA device and its state memory, got " +
                                device.str() + (state ? "" : " and no state"));
  }
  if (capture_.state != nullptr) {
    throw std::logic_error("Generator::graph_capture_begin: the generator is already used by a capture on " +
                           capture_.device.str() + " (one CUDA graph capture at a time)");
  }
  capture_ = Capture{std::this_thread::get_id(), device, state, 0};
}

uint64_t Generator::graph_capture_end() {
  std::lock_guard<std::mutex> lk(mu_);
  if (capture_.state == nullptr) throw std::logic_error("Generator::graph_capture_end: no capture is underway");
  uint64_t blocks = capture_.blocks;
  capture_ = Capture{};
  return blocks;
}

std::pair<uint64_t, uint64_t> Generator::graph_replay_state(uint64_t blocks) {
  std::lock_guard<std::mutex> lk(mu_);
  std::pair<uint64_t, uint64_t> state{seed_, offset_};
  offset_ += blocks;
  return state;
}

Generator& default_generator() {
  static Generator* g = new Generator();
  return *g;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace colony
