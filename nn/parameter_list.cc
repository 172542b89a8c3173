#include "nn/parameter_list.h"

#include <sstream>
#include <stdexcept>

namespace colony::nn {

Tensor& ParameterList::append(const Tensor& param) {
  return register_parameter(std::to_string(size()), param, param.requires_grad());
}

void ParameterList::extend(const std::vector<Tensor>& parameters) {
  for (const Tensor& p : parameters) append(p);
}

namespace {

// torch's _get_abs_string_index: -size <= index < size, negatives from the end.
int64_t absolute_index(int64_t index, size_t size) {
  const int64_t n = static_cast<int64_t>(size);
  if (index < -n || index >= n) throw std::out_of_range("index " + std::to_string(index) + " is out of range");
  return index < 0 ? index + n : index;
}

}  // namespace

Tensor ParameterList::get(int64_t index) const { return items()[absolute_index(index, size())].second; }

void ParameterList::set(int64_t index, const Tensor& param) {
  // Rebuilt in order, so that the index keeps its place (registration order is the order).
  std::vector<Tensor> all = values();
  all[absolute_index(index, all.size())] = param;
  for (size_t i = 0; i < all.size(); ++i) remove_parameter(std::to_string(i));
  extend(all);
}

std::vector<Tensor> ParameterList::values() const {
  std::vector<Tensor> out;
  for (const auto& [k, t] : items()) out.push_back(t);
  return out;
}

// As torch prints it: "(0): Parameter containing: [torch.float32 of size 2x3]" per entry
// ("... (cuda:0)]" on a GPU), indented by four. (ParameterDict's lines name legacy tensor types
// instead: torch prints the two differently.)
std::string ParameterList::extra_repr() const {
  std::ostringstream os;
  size_t i = 0;
  for (const Tensor& t : values()) {
    os << "\n    (" << i++ << "): Parameter containing: [torch." << dtype_name(t.dtype()) << " of size ";
    for (int64_t d = 0; d < t.dim(); ++d) os << (d ? "x" : "") << t.size(d);
    os << (t.device().is_cpu() ? "" : " (" + t.device().str() + ")") << "]";
  }
  if (!empty()) os << "\n";
  return os.str();
}

std::shared_ptr<Module> ParameterList::clone_module() const {
  auto copy = std::make_shared<ParameterList>();
  for (const auto& [n, p] : named_parameters(false)) copy->register_parameter(n, clone_tensor(p), p.requires_grad());
  copy->copy_state_from(*this);
  return copy;
}

}  // namespace colony::nn
