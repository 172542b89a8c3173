#include "nn/repr.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace colony::nn::repr {

std::string py_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Python prints integral floats below 1e16 in positional notation with ".0".
  if (v == std::floor(v) && std::fabs(v) < 1e16) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.0f.0", v);
    return buf;
  }
  // The shortest %g spelling that reads back as the same double; %g switches to an exponent below
  // 1e-4 as Python's repr does ("1e-05").
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string tuple(const Int2& v) { return "(" + std::to_string(v.h) + ", " + std::to_string(v.w) + ")"; }

std::string int_or_tuple(const Int2& v) { return v.h == v.w ? std::to_string(v.h) : tuple(v); }

std::string tuple3(const Int3& v) {
  return "(" + std::to_string(v.d) + ", " + std::to_string(v.h) + ", " + std::to_string(v.w) + ")";
}

std::string int_or_tuple3(const Int3& v) { return v.d == v.h && v.h == v.w ? std::to_string(v.d) : tuple3(v); }

}  // namespace colony::nn::repr
