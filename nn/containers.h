// Containers of modules, as in PyTorch: Sequential (runs its children in order; unnamed children
// are called "0", "1", ...), ModuleList (an indexable list) and ModuleDict (by name). Children are
// registered, so their parameters appear as "0.weight", "features.conv.weight", ... in state_dict().
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"

namespace colony::nn {

using NamedModule = std::pair<std::string, std::shared_ptr<Module>>;

class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  // Named children: Sequential({{"conv", conv}, {"bn", bn}, {"relu", relu}}).
  Sequential(std::initializer_list<NamedModule> modules);
  explicit Sequential(const std::vector<NamedModule>& modules);
  void push_back(std::shared_ptr<Module> module);
  void push_back(const std::string& name, std::shared_ptr<Module> module);
  Tensor forward(const Tensor& input) override;
  size_t size() const { return modules_.size(); }
  std::shared_ptr<Module> operator[](size_t i) const { return modules_.at(i); }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

// A list of modules with no forward of its own: the owner decides how to call them.
class ModuleList : public Module {
 public:
  ModuleList() = default;
  ModuleList(std::initializer_list<std::shared_ptr<Module>> modules);
  void push_back(std::shared_ptr<Module> module);
  size_t size() const { return modules_.size(); }
  std::shared_ptr<Module> operator[](size_t i) const { return modules_.at(i); }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

// Modules by name, in insertion order.
class ModuleDict : public Module {
 public:
  ModuleDict() = default;
  ModuleDict(std::initializer_list<NamedModule> modules);
  void insert(const std::string& name, std::shared_ptr<Module> module);
  // Throws naming the key and the keys there are when `name` is absent.
  std::shared_ptr<Module> operator[](const std::string& name) const;
  bool contains(const std::string& name) const;
  size_t size() const { return items_.size(); }
  std::vector<std::string> keys() const;
  const std::vector<NamedModule>& items() const { return items_; }

 private:
  std::vector<NamedModule> items_;
};

}  // namespace colony::nn
