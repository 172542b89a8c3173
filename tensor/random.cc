#include "tensor/random.h"

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

Generator& default_generator() {
  static Generator* g = new Generator();
  return *g;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace colony
