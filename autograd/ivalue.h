// One value of the few kinds a custom autograd Function keeps between its forward and backward
// (ctx->saved_data["alpha"] = 2.5; ... ctx->saved_data["alpha"].toDouble()), spelled as libtorch's
// c10::IValue so code written against libtorch's custom Functions reads the same here.
//
// As c10::IValue, the accessors are strict: toDouble() on an int throws "Expected Double but got
// Int" rather than converting. Integers of any width are stored as int64_t, floats as double.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "tensor/tensor.h"

namespace colony::autograd {

class IValue {
 public:
  IValue() = default;  // None
  IValue(bool v) : value_(v) {}  // NOLINT: implicit, as c10::IValue
  template <typename I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  IValue(I v) : value_(static_cast<int64_t>(v)) {}  // NOLINT
  IValue(float v) : value_(static_cast<double>(v)) {}  // NOLINT
  IValue(double v) : value_(v) {}  // NOLINT
  IValue(std::string v) : value_(std::move(v)) {}  // NOLINT
  IValue(const char* v) : value_(std::string(v)) {}  // NOLINT
  IValue(Tensor v) : value_(std::move(v)) {}  // NOLINT
  IValue(std::vector<int64_t> v) : value_(std::move(v)) {}  // NOLINT (also a Shape)
  IValue(std::vector<double> v) : value_(std::move(v)) {}  // NOLINT
  IValue(std::vector<Tensor> v) : value_(std::move(v)) {}  // NOLINT

  bool isNone() const { return holds<std::monostate>(); }
  bool isBool() const { return holds<bool>(); }
  bool isInt() const { return holds<int64_t>(); }
  bool isDouble() const { return holds<double>(); }
  bool isString() const { return holds<std::string>(); }
  bool isTensor() const { return holds<Tensor>(); }
  bool isIntList() const { return holds<std::vector<int64_t>>(); }
  bool isDoubleList() const { return holds<std::vector<double>>(); }
  bool isTensorList() const { return holds<std::vector<Tensor>>(); }

  bool toBool() const { return get<bool>("Bool"); }
  int64_t toInt() const { return get<int64_t>("Int"); }
  double toDouble() const { return get<double>("Double"); }
  const std::string& toStringRef() const { return get<std::string>("String"); }
  const Tensor& toTensor() const { return get<Tensor>("Tensor"); }
  const std::vector<int64_t>& toIntVector() const { return get<std::vector<int64_t>>("IntList"); }
  const std::vector<double>& toDoubleVector() const { return get<std::vector<double>>("DoubleList"); }
  const std::vector<Tensor>& toTensorVector() const { return get<std::vector<Tensor>>("TensorList"); }

  // "None", "Bool", "Int", "Double", "String", "Tensor", "IntList", "DoubleList", "TensorList".
  const char* tagKind() const;

 private:
  template <typename T>
  bool holds() const { return std::holds_alternative<T>(value_); }
  template <typename T>
  const T& get(const char* expected) const {
    if (!holds<T>()) throw_wrong_kind(expected);
    return std::get<T>(value_);
  }
  [[noreturn]] void throw_wrong_kind(const char* expected) const;

  std::variant<std::monostate, bool, int64_t, double, std::string, Tensor, std::vector<int64_t>,
               std::vector<double>, std::vector<Tensor>>
      value_;
};

}  // namespace colony::autograd
