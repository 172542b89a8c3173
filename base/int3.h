// Int3: a (depth, height, width) triple that also accepts one number for all three, as PyTorch's
// ExpandingArray<3> does: kernel_size 3 means 3x3x3, padding {0, 1, 1} means no planes, 1 row and
// 1 column. The triple type of the 3-D raw ops (colony::raw::conv3d) and of nn options (Conv3dOptions).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace colony {

struct Int3 {
  int64_t d = 0, h = 0, w = 0;
  constexpr Int3(int64_t all) : d(all), h(all), w(all) {}  // NOLINT(google-explicit-constructor): by design
  constexpr Int3(int64_t depth, int64_t height, int64_t width) : d(depth), h(height), w(width) {}
  // {3} or {1, 3, 3}, as PyTorch's ExpandingArray takes a one- or three-element list.
  Int3(std::initializer_list<int64_t> v) {  // NOLINT(google-explicit-constructor)
    if (v.size() != 1 && v.size() != 3) {
      throw std::invalid_argument("Int3: expected 1 or 3 values (depth, height, width), got " +
                                  std::to_string(v.size()));
    }
    const int64_t* p = v.begin();
    d = p[0];
    h = v.size() == 3 ? p[1] : p[0];
    w = v.size() == 3 ? p[2] : p[0];
  }
  std::vector<int64_t> vec() const { return {d, h, w}; }
  constexpr bool operator==(const Int3& o) const { return d == o.d && h == o.h && w == o.w; }
  constexpr bool operator!=(const Int3& o) const { return !(*this == o); }
};

// "(d, h, w)", as PyTorch prints a tuple (Conv3d(3, 6, kernel_size=(3, 3, 3), ...)).
inline std::ostream& operator<<(std::ostream& os, const Int3& v) {
  return os << "(" << v.d << ", " << v.h << ", " << v.w << ")";
}

}  // namespace colony
