#include "tensor/dtype.h"

namespace colony {
namespace {

// Category rank: bool < integral < floating.
int category(DType t) {
  if (t == DType::Bool) return 0;
  return is_floating(t) ? 2 : 1;
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) {
    if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    auto rank = [](DType t) { return t == DType::Float64 ? 3 : t == DType::Float32 ? 2 : 1; };
    return rank(a) >= rank(b) ? a : b;
  }
  // Integral: uint8 < int32 < int64 by width; uint8 with a signed type is the signed type, which
  // is always at least as wide here.
  auto rank = [](DType t) { return t == DType::Int64 ? 3 : t == DType::Int32 ? 2 : 1; };
  return rank(a) >= rank(b) ? a : b;
}

std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

}  // namespace colony
