// Containers of modules, as in PyTorch: Sequential (runs its children in order; unnamed children
// are called "0", "1", ...), ModuleList (an indexable list) and ModuleDict (by name). Children are
// registered, so their parameters appear as "0.weight", "features.conv.weight", ... in state_dict().
//
// Each child is held as an AnyModule (any_module.h), so a container takes modules whose forward
// has any signature and can call them: list->any(i).forward(x, mask). Typed access is libtorch's:
// ptr<T>(i) (a shared_ptr<T>) and at<T>(i) (a T&), with an error naming both types on a mismatch.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nn/any_module.h"
#include "nn/module.h"

namespace colony::nn {

using NamedModule = std::pair<std::string, std::shared_ptr<Module>>;

// What Sequential and ModuleList share: modules by position.
class ModuleSequence : public Module {
 public:
  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  std::shared_ptr<Module> operator[](size_t i) const { return modules_[checked(i)]; }
  std::shared_ptr<Module> ptr(size_t i) const { return (*this)[i]; }
  // The error's context (a demangled type name) is built only on failure: built on every call, it
  // took 0.1-0.3 % of the char GPT's step, which looks up its blocks this way in each forward.
  template <typename T>
  std::shared_ptr<T> ptr(size_t i) const {
    std::shared_ptr<Module> m = (*this)[i];
    if (auto typed = std::dynamic_pointer_cast<T>(m)) return typed;
    return module_cast<T>(m, name() + "[" + std::to_string(i) + "]");
  }
  template <typename T>
  T& at(size_t i) const {
    return *ptr<T>(i);
  }
  // The i-th module as an AnyModule, to call a forward of any signature.
  const AnyModule& any(size_t i) const { return any_[checked(i)]; }
  // Iterates the modules as shared_ptr<Module>.
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 protected:
  // The clone of a Sequential or ModuleList: a new C holding a clone of each module, under the same
  // names (a module held twice is one module in the copy).
  template <typename C>
  std::shared_ptr<Module> clone_sequence() const {
    auto copy = std::make_shared<C>();
    for (size_t i = 0; i < size(); ++i) copy->append(names_[i], any_[i].with_module(modules_[i]->clone()));
    copy->copy_state_from(*this);
    return copy;
  }
  void append(const std::string& child_name, AnyModule module);
  size_t checked(size_t i) const;
  const std::string& child_name(size_t i) const { return names_[i]; }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
  std::vector<AnyModule> any_;
  std::vector<std::string> names_;
};

class Sequential : public ModuleSequence {
 public:
  Sequential() = default;
  // Sequential{conv, relu, attn}, Sequential({{"conv", conv}, {"attn", attn}}), and
  // std::make_shared<Sequential>(conv, relu, attn).
  Sequential(std::initializer_list<AnyModule> modules);
  Sequential(std::initializer_list<NamedAnyModule> modules);
  template <typename... Ms, typename = std::enable_if_t<(sizeof...(Ms) > 0)>>
  explicit Sequential(std::shared_ptr<Ms>... modules) {
    (push_back(AnyModule(std::move(modules))), ...);
  }
  // The spellings of older code: std::initializer_list<std::shared_ptr<Module>>{...} and
  // std::initializer_list<NamedModule>{...}. Templates only so that a braced list of modules picks
  // the constructors above (a non-template wins a tie); modules held as Module are called through
  // forward(const Tensor&).
  template <typename = void>
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
    for (const auto& m : modules) push_back(m);
  }
  template <typename = void>
  Sequential(std::initializer_list<NamedModule> modules) {
    for (const auto& [n, m] : modules) push_back(n, m);
  }
  explicit Sequential(const std::vector<NamedModule>& modules);

  void push_back(AnyModule module);
  void push_back(const std::string& name, AnyModule module);

  // Runs the modules in order, each on the previous one's output (PyTorch's nn.Sequential); with
  // no modules, returns the input. Every module that maps a Tensor to a Tensor: a plain loop.
  Tensor forward(const Tensor& input) override;
  // Several inputs for the first module, or a result other than a Tensor:
  // seq->forward(x, mask), seq->forward<std::tuple<Tensor, Tensor>>(x). Each later module takes
  // the previous one's output as its one argument, as libtorch's Sequential does. (Parameters are
  // const references so that seq->forward(x) still picks the overload above.)
  template <typename R = Tensor, typename... Args>
  R forward(const Args&... inputs) {
    return forward_result<R>(forward_values(pack_values(inputs...)), name() + "::forward");
  }
  // The same with boxed values; AnyModule calls this for a Sequential held inside a container.
  AnyValue forward_values(std::vector<AnyValue> inputs);

 protected:
  std::shared_ptr<Module> clone_module() const override { return clone_sequence<Sequential>(); }
};

// A list of modules with no forward of its own: the owner decides how to call them.
class ModuleList : public ModuleSequence {
 public:
  ModuleList() = default;
  ModuleList(std::initializer_list<AnyModule> modules);
  template <typename = void>
  ModuleList(std::initializer_list<std::shared_ptr<Module>> modules) {
    for (const auto& m : modules) push_back(m);
  }
  void push_back(AnyModule module);
  // torch's ModuleList.__repr__: a run of consecutive modules that print alike is one line,
  // "(0-5): 6 x TransformerEncoderLayer(...)", so a stack of copies prints as in PyTorch.
  std::string repr(int indent = 0) const override;

 protected:
  std::shared_ptr<Module> clone_module() const override { return clone_sequence<ModuleList>(); }
};

// Modules by name, in insertion order.
class ModuleDict : public Module {
 public:
  ModuleDict() = default;
  ModuleDict(std::initializer_list<NamedAnyModule> modules);
  template <typename = void>
  ModuleDict(std::initializer_list<NamedModule> modules) {
    for (const auto& [n, m] : modules) insert(n, m);
  }
  void insert(const std::string& name, AnyModule module);
  // Throws naming the key and the keys there are when `name` is absent.
  std::shared_ptr<Module> operator[](const std::string& name) const { return items_[index(name)].second; }
  template <typename T>
  std::shared_ptr<T> ptr(const std::string& key) const {
    std::shared_ptr<Module> m = (*this)[key];
    if (auto typed = std::dynamic_pointer_cast<T>(m)) return typed;  // the context only on failure, as above
    return module_cast<T>(m, this->name() + "[\"" + key + "\"]");
  }
  template <typename T>
  T& at(const std::string& key) const {
    return *ptr<T>(key);
  }
  const AnyModule& any(const std::string& key) const { return any_[index(key)]; }
  bool contains(const std::string& name) const;
  size_t size() const { return items_.size(); }
  std::vector<std::string> keys() const;
  const std::vector<NamedModule>& items() const { return items_; }

 protected:
  std::shared_ptr<Module> clone_module() const override;

 private:
  size_t index(const std::string& name) const;
  std::vector<NamedModule> items_;
  std::vector<AnyModule> any_;
};

}  // namespace colony::nn
