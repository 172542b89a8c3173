#include "nn/parameter_dict.h"

#include <sstream>
#include <stdexcept>

namespace colony::nn {
namespace {

std::string key_list(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) out += (out.empty() ? "" : ", ") + k;
  return "[" + out + "]";
}

// torch.typename's legacy tensor type names.
std::string torch_type_name(const Tensor& t) {
  std::string base;
  switch (t.dtype()) {
    case kFloat32: base = "FloatTensor"; break;
    case kFloat64: base = "DoubleTensor"; break;
    case kFloat16: base = "HalfTensor"; break;
    case kBFloat16: base = "BFloat16Tensor"; break;
    case kInt64: base = "LongTensor"; break;
    case kInt32: base = "IntTensor"; break;
    case kBool: base = "BoolTensor"; break;
    default: base = std::string(dtype_name(t.dtype())) + "Tensor"; break;
  }
  return t.device().is_cpu() ? "torch." + base : "torch.cuda." + base;
}

}  // namespace

ParameterDict::ParameterDict(const NamedTensors& parameters) { update(parameters); }

Tensor& ParameterDict::insert(const std::string& key, const Tensor& param) {
  if (contains(key)) throw std::invalid_argument("ParameterDict: \"" + key + "\" is already registered (update() replaces)");
  return register_parameter(key, param, param.requires_grad());
}

Tensor ParameterDict::pop(const std::string& key) {
  if (!contains(key)) throw std::out_of_range("ParameterDict: no key \"" + key + "\"; keys " + key_list(keys()));
  return remove_parameter(key);
}

void ParameterDict::update(const NamedTensors& parameters) {
  // Rebuilt in order with the new values, so that an existing key keeps its place.
  NamedTensors merged = items();
  for (const auto& [key, t] : parameters) {
    bool replaced = false;
    for (auto& [k, old] : merged) {
      if (k == key) old = t, replaced = true;
    }
    if (!replaced) merged.emplace_back(key, t);
  }
  clear();
  for (const auto& [key, t] : merged) insert(key, t);
}

void ParameterDict::clear() {
  for (const std::string& k : keys()) remove_parameter(k);
}

bool ParameterDict::contains(const std::string& key) const {
  for (const auto& [k, t] : items()) {
    if (k == key) return true;
  }
  return false;
}

std::vector<std::string> ParameterDict::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, t] : items()) out.push_back(k);
  return out;
}

std::vector<Tensor> ParameterDict::values() const {
  std::vector<Tensor> out;
  for (const auto& [k, t] : items()) out.push_back(t);
  return out;
}

Tensor ParameterDict::get(const std::string& key) const {
  for (const auto& [k, t] : items()) {
    if (k == key) return t;
  }
  throw std::out_of_range("ParameterDict: no key \"" + key + "\"; keys " + key_list(keys()));
}

// As torch prints it: one "(key): Parameter containing: [torch.FloatTensor of size 2x3]" line per
// entry ("... (cuda:0)]" on a GPU), indented by four.
std::string ParameterDict::extra_repr() const {
  std::ostringstream os;
  for (const auto& [k, t] : items()) {
    os << "\n    (" << k << "): Parameter containing: [" << torch_type_name(t) << " of size ";
    for (int64_t d = 0; d < t.dim(); ++d) os << (d ? "x" : "") << t.size(d);
    os << (t.device().is_cpu() ? "" : " (" + t.device().str() + ")") << "]";
  }
  if (!empty()) os << "\n";
  return os.str();
}

std::shared_ptr<Module> ParameterDict::clone_module() const {
  auto copy = std::make_shared<ParameterDict>();
  for (const auto& [n, p] : named_parameters(false)) copy->register_parameter(n, clone_tensor(p), p.requires_grad());
  copy->copy_state_from(*this);
  return copy;
}

}  // namespace colony::nn
