// COLONY_ARG declares one field of an options struct with a chained setter and a getter, so
// defaults are visible where they are declared:
//   struct Conv2dOptions { COLONY_ARG(int64_t, stride) = 1; };
//   Conv2dOptions(3, 6, 5).stride(2).padding(1)
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#define COLONY_ARG(T, name)                \
 public:                                   \
  auto& name(const T& new_value) {         \
    name##_ = new_value;                   \
    return *this;                          \
  }                                        \
  const T& name() const { return name##_; } \
                                           \
 private:                                  \
  T name##_

namespace colony::nn {

// A pair of sizes (height, width) that also accepts a single number for both, as PyTorch's
// ExpandingArray does: Conv2dOptions(3, 6, 5) means a 5x5 kernel.
struct Size2 {
  Size2(int64_t v) : h(v), w(v) {}  // NOLINT: implicit by design
  Size2(int64_t height, int64_t width) : h(height), w(width) {}
  Size2(std::initializer_list<int64_t> v) : h(*v.begin()), w(v.size() > 1 ? *(v.begin() + 1) : *v.begin()) {}
  std::vector<int64_t> vec() const { return {h, w}; }
  bool operator==(const Size2& o) const { return h == o.h && w == o.w; }
  int64_t h, w;
};

}  // namespace colony::nn
