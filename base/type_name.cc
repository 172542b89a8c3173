#include "base/type_name.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace colony {
namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

}  // namespace

std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status),
                                                   std::free);
  std::string out = status == 0 ? demangled.get() : type.name();
  // The library's own namespaces say nothing a user needs; std::string's full spelling is 80 characters.
  replace_all(out, "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string");
  replace_all(out, "colony::nn::", "");
  replace_all(out, "colony::", "");
  return out;
}

}  // namespace colony
