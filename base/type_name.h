// Readable C++ type names for error messages and printing: demangled, without the "colony::"
// namespaces, std::string spelled so, and (type_name<T>()) with the const and & a signature has.
#pragma once

#include <string>
#include <type_traits>
#include <typeinfo>

namespace colony {

// "Tensor", "std::tuple<Tensor, Tensor>", "double", "std::string", "MyModel" for colony::nn::MyModel.
std::string type_name(const std::type_info& type);

// As written in a signature: type_name<const Tensor&>() is "const Tensor&" (typeid drops both).
template <typename T>
std::string type_name() {
  using Bare = std::remove_reference_t<T>;
  std::string out = std::is_const_v<Bare> ? "const " : "";
  out += type_name(typeid(Bare));
  if (std::is_lvalue_reference_v<T>) out += "&";
  if (std::is_rvalue_reference_v<T>) out += "&&";
  return out;
}

}  // namespace colony
