#include "nn/containers.h"

#include <stdexcept>

namespace colony::nn {

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& m : modules) push_back(m);
}

Sequential::Sequential(std::initializer_list<NamedModule> modules) {
  for (const auto& [name, m] : modules) push_back(name, m);
}

Sequential::Sequential(const std::vector<NamedModule>& modules) {
  for (const auto& [name, m] : modules) push_back(name, m);
}

void Sequential::push_back(std::shared_ptr<Module> module) { push_back(std::to_string(modules_.size()), module); }

void Sequential::push_back(const std::string& name, std::shared_ptr<Module> module) {
  register_module(name, module);
  modules_.push_back(std::move(module));
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (auto& m : modules_) x = m->forward(x);
  return x;
}

ModuleList::ModuleList(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& m : modules) push_back(m);
}

void ModuleList::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

ModuleDict::ModuleDict(std::initializer_list<NamedModule> modules) {
  for (const auto& [name, m] : modules) insert(name, m);
}

void ModuleDict::insert(const std::string& name, std::shared_ptr<Module> module) {
  register_module(name, module);  // refuses a name already taken
  items_.emplace_back(name, std::move(module));
}

bool ModuleDict::contains(const std::string& name) const {
  for (const auto& [n, _] : items_)
    if (n == name) return true;
  return false;
}

std::shared_ptr<Module> ModuleDict::operator[](const std::string& name) const {
  for (const auto& [n, m] : items_)
    if (n == name) return m;
  std::string known;
  for (const auto& [n, _] : items_) known += (known.empty() ? "\"" : ", \"") + n + "\"";
  throw std::out_of_range("ModuleDict: no module named \"" + name + "\"; it holds " +
                          (known.empty() ? std::string("none") : known));
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& [n, _] : items_) out.push_back(n);
  return out;
}

}  // namespace colony::nn
