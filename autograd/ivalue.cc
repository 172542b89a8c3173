#include "autograd/ivalue.h"

#include <stdexcept>

namespace colony::autograd {

const char* IValue::tagKind() const {
  static const char* const kinds[] = {"None",   "Bool",    "Int",        "Double",    "String",
                                      "Tensor", "IntList", "DoubleList", "TensorList"};
  return kinds[value_.index()];
}

void IValue::throw_wrong_kind(const char* expected) const {
  // c10::IValue's wording.
  throw std::runtime_error(std::string("Expected ") + expected + " but got " + tagKind());
}

}  // namespace colony::autograd
