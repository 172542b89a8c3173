#include "nn/containers.h"

#include <sstream>
#include <stdexcept>

namespace colony::nn {

void ModuleSequence::append(const std::string& child_name, AnyModule module) {
  std::shared_ptr<Module> m = module.ptr();
  for (const std::string& n : names_)
    if (n == child_name) throw std::invalid_argument(name() + ": \"" + child_name + "\" is already registered");
  register_module(child_name, m);
  modules_.push_back(std::move(m));
  any_.push_back(std::move(module));
  names_.push_back(child_name);
}

size_t ModuleSequence::checked(size_t i) const {
  if (i >= modules_.size())
    throw std::out_of_range(name() + " index " + std::to_string(i) + " is out of range: it holds " +
                            std::to_string(modules_.size()) + " module" + (modules_.size() == 1 ? "" : "s"));
  return i;
}

Sequential::Sequential(std::initializer_list<AnyModule> modules) {
  for (const auto& m : modules) push_back(m);
}

Sequential::Sequential(std::initializer_list<NamedAnyModule> modules) {
  for (const auto& m : modules) push_back(m.name, m.module);
}

Sequential::Sequential(const std::vector<NamedModule>& modules) {
  for (const auto& [n, m] : modules) push_back(n, m);
}

void Sequential::push_back(AnyModule module) { push_back(std::to_string(size()), std::move(module)); }

void Sequential::push_back(const std::string& name, AnyModule module) { append(name, std::move(module)); }

Tensor Sequential::forward(const Tensor& input) {
  bool plain = true;
  for (size_t i = 0; i < size() && plain; ++i) plain = any(i).maps_tensor_to_tensor();
  if (!plain) return forward_result<Tensor>(forward_values(pack_values(input)), name() + "::forward");
  Tensor x = input;
  for (size_t i = 0; i < size(); ++i) x = any(i).forward(x);
  return x;
}

AnyValue Sequential::forward_values(std::vector<AnyValue> inputs) {
  if (is_empty()) {
    if (inputs.size() == 1) return std::move(inputs[0]);
    throw ForwardArgumentError(name() + " is empty, so it returns its input, which must be one value; " +
                               std::to_string(inputs.size()) + " were given");
  }
  AnyValue x;
  for (size_t i = 0; i < size(); ++i) {
    std::vector<AnyValue> args;
    if (i == 0) {
      args = std::move(inputs);
    } else {
      args.push_back(std::move(x));
    }
    try {
      x = any(i).forward_values(std::move(args));
    } catch (const ForwardArgumentError& e) {
      // Says which module of the chain refused its input ("(2): ...").
      throw ForwardArgumentError(name() + " module (" + child_name(i) + "): " + e.what());
    }
  }
  return x;
}

ModuleList::ModuleList(std::initializer_list<AnyModule> modules) {
  for (const auto& m : modules) push_back(m);
}

void ModuleList::push_back(AnyModule module) { append(std::to_string(size()), std::move(module)); }

std::string ModuleList::repr(int indent) const {
  if (is_empty()) return name() + "()";
  std::ostringstream os;
  os << name() << "(\n";
  for (size_t i = 0; i < size();) {
    const std::string first = (*this)[i]->repr(indent + 2);
    size_t end = i + 1;
    while (end < size() && (*this)[end]->repr(indent + 2) == first) ++end;
    os << std::string(indent + 2, ' ') << "(" << i;
    if (end - i > 1) os << "-" << end - 1 << "): " << end - i << " x ";
    else os << "): ";
    os << first << "\n";
    i = end;
  }
  os << std::string(indent, ' ') << ")";
  return os.str();
}

ModuleDict::ModuleDict(std::initializer_list<NamedAnyModule> modules) {
  for (const auto& m : modules) insert(m.name, m.module);
}

void ModuleDict::insert(const std::string& name, AnyModule module) {
  std::shared_ptr<Module> m = module.ptr();
  if (contains(name)) throw std::invalid_argument(this->name() + ": \"" + name + "\" is already registered");
  register_module(name, m);
  items_.emplace_back(name, std::move(m));
  any_.push_back(std::move(module));
}

std::shared_ptr<Module> ModuleDict::clone_module() const {
  auto copy = std::make_shared<ModuleDict>();
  for (size_t i = 0; i < items_.size(); ++i) copy->insert(items_[i].first, any_[i].with_module(items_[i].second->clone()));
  copy->copy_state_from(*this);
  return copy;
}

bool ModuleDict::contains(const std::string& name) const {
  for (const auto& [n, _] : items_)
    if (n == name) return true;
  return false;
}

size_t ModuleDict::index(const std::string& name) const {
  for (size_t i = 0; i < items_.size(); ++i)
    if (items_[i].first == name) return i;
  std::string known;
  for (const auto& [n, _] : items_) known += (known.empty() ? "\"" : ", \"") + n + "\"";
  throw std::out_of_range(this->name() + ": no module named \"" + name + "\"; it holds " +
                          (known.empty() ? std::string("none") : known));
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& [n, _] : items_) out.push_back(n);
  return out;
}

}  // namespace colony::nn
