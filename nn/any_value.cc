#include "nn/any_value.h"

#include <sstream>

namespace colony::nn {

std::string AnyValue::describe() const {
  if (!content_) return "nothing";
  bool integral = false;
  std::optional<long double> n = content_->number(&integral);
  if (!n) return type_name();
  std::ostringstream os;
  os.precision(17);
  os << type_name() << " " << *n;
  return os.str();
}

}  // namespace colony::nn
