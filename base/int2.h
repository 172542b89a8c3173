// Int2: a (height, width) pair that also accepts one number for both, as PyTorch's
// ExpandingArray<2> does: kernel_size 5 means 5x5, padding {1, 2} means 1 row and 2 columns.
// The one pair type of the raw ops (colony::raw::conv2d) and of nn options (Conv2dOptions).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace colony {

struct Int2 {
  int64_t h = 0, w = 0;
  constexpr Int2(int64_t both) : h(both), w(both) {}  // NOLINT(google-explicit-constructor): by design
  constexpr Int2(int64_t height, int64_t width) : h(height), w(width) {}
  // {5} or {3, 4}, as PyTorch's ExpandingArray takes a one- or two-element list.
  Int2(std::initializer_list<int64_t> v) {  // NOLINT(google-explicit-constructor)
    if (v.size() != 1 && v.size() != 2) {
      throw std::invalid_argument("Int2: expected 1 or 2 values (height, width), got " + std::to_string(v.size()));
    }
    h = *v.begin();
    w = *(v.end() - 1);
  }
  std::vector<int64_t> vec() const { return {h, w}; }
  constexpr bool operator==(const Int2& o) const { return h == o.h && w == o.w; }
  constexpr bool operator!=(const Int2& o) const { return !(*this == o); }
};

// "(h, w)", as PyTorch prints a tuple (Conv2d(3, 6, kernel_size=(5, 5), ...)).
inline std::ostream& operator<<(std::ostream& os, const Int2& v) { return os << "(" << v.h << ", " << v.w << ")"; }

}  // namespace colony
