#include "nn/any_module.h"

namespace colony::nn {

std::shared_ptr<detail::AnyForward> AnyModule::throw_null() {
  throw std::invalid_argument("AnyModule: the module is null");
}

detail::AnyForward& AnyModule::checked() const {
  if (!call_) throw std::logic_error("AnyModule is empty: it holds no module to call");
  return *call_;
}

}  // namespace colony::nn
