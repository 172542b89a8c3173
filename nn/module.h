// nn::Module: the base of every layer and model. Modules are held by std::shared_ptr; children,
// parameters and buffers are kept in registration order, so named_parameters() and state_dict()
// list them the way PyTorch does ("conv1.weight", "conv1.bias", "fc1.weight", ...).
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <type_traits>
#include <typeinfo>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace colony::nn {

class Module;
template <typename T>
std::shared_ptr<Module> clone_module(const T& self);

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The module's computation for the common case, one Tensor in and one out: every layer, the
  // models DDP wraps and Sequential's fast path. Layers and user models override it; calling the
  // base version is an error that names the module type. A module whose forward takes other
  // arguments declares that forward instead (it hides this one) and is called through its own
  // type or an AnyModule (any_module.h), which is how containers hold it.
  virtual Tensor forward(const Tensor& input);
  // Type name used in messages and printing ("Linear", "LeNet", ...). Defaults to the demangled
  // C++ class name.
  virtual std::string name() const;

  // A deep copy (libtorch's module->clone(), Python's copy.deepcopy(module)): new parameters and
  // buffers with the same values, dtypes, devices and requires_grad, submodules cloned, the same
  // training flags; gradients are not copied (as deepcopy leaves a Parameter's .grad behind). A
  // module registered in two places, or a tensor registered under two names, is one module (one
  // tensor) in the copy too. Every nn module is cloneable; a model class becomes so by deriving
  // from nn::Cloneable<Model> (below) or writing COLONY_CLONEABLE in its body. Differs from
  // deepcopy in how: the copy is built by the class's constructor (from its `options` member when it
  // has one, else its default constructor), as libtorch's Cloneable builds it with reset(), and the
  // values are then copied in; the random numbers that construction draws are given back, so the
  // generator's stream is as if no clone happened. A module changed after construction (a layer
  // replaced, a weight tied) is refused with what differs: override clone_module() to build it.
  // A module type without a clone (DDP, or a model that is not Cloneable) throws, naming it.
  std::shared_ptr<Module> clone() const;

  // This module as a T (dynamic_cast), or null when it is not one: libtorch's Module::as<T>().
  template <typename T>
  T* as() {
    return dynamic_cast<T*>(this);
  }
  template <typename T>
  const T* as() const {
    return dynamic_cast<const T*>(this);
  }

  // ---- registration: each returns what it registered ----
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }
  // The stored handle shares the TensorImpl with `t`: to(device) and load_state_dict() update it in
  // place, so a member copy of the returned tensor stays valid.
  Tensor& register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  // Makes the registered parameter `name` the tensor `t`, which other modules may hold too (weight
  // tying: a GPT's output head reading the token embedding's table). Returns the stored handle; the
  // module's member must be pointed at it as well, since forward() reads the member:
  //   head->weight = head->replace_parameter("weight", emb->weight);
  // (Assigning only the member leaves the old tensor registered: parameters() and state_dict()
  // would list a tensor forward() never reads.) t must have the replaced parameter's shape. A
  // shared parameter is listed once by parameters(), under every name by state_dict(), stored once
  // by nn::save and loaded into by whichever of its names a checkpoint holds.
  Tensor& replace_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  // persistent = false: a buffer that moves with to() but is left out of state_dict() (and so of
  // checkpoints), as PyTorch's register_buffer(name, t, persistent=False).
  Tensor& register_buffer(const std::string& name, Tensor t, bool persistent = true);

  // ---- traversal (recursive, registration order, dotted names) ----
  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  // A module registered twice (under two names, or in two places of the tree) is listed once, under
  // its first name, as PyTorch's children() / named_modules() do (their memo): counting parameters
  // over modules() does not count a shared layer twice. state_dict() keeps every name.
  std::vector<std::shared_ptr<Module>> children() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  // This module and all descendants, depth-first, with dotted prefixes ("" for this one).
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules();
  // The same modules without their names (PyTorch's modules()).
  std::vector<std::shared_ptr<Module>> modules();
  // Calls fn on every descendant, then on this module (PyTorch's Module.apply, children first;
  // libtorch calls it on the module first): custom initialization as nanoGPT writes it,
  //   model->apply([](nn::Module& m) { if (auto* l = m.as<nn::Linear>()) nn::init::normal_(l->weight, 0, 0.02); });
  void apply(const std::function<void(Module&)>& fn);

  // ---- mode, device, gradients ----
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Moves/converts every parameter and buffer in place (integer buffers keep their dtype on to(dtype)).
  void to(Device device, bool non_blocking = false);
  void to(DType dtype);
  void to(Device device, DType dtype, bool non_blocking = false);
  // set_to_none = true (PyTorch's default) drops the gradients; false zeroes them in place.
  void zero_grad(bool set_to_none = true);
  // Sets requires_grad on every parameter (PyTorch's Module.requires_grad_): false freezes the
  // module, as for fine-tuning only a new head. Buffers are untouched.
  void requires_grad_(bool requires_grad = true);

  // ---- state ----
  // Parameters and buffers by dotted name, each module's own before its children's.
  NamedTensors state_dict() const;
  // Copies values into the existing tensors (any device/dtype conversion happens on the way).
  // strict: missing, unexpected and shape-mismatched keys are all listed in one error. Returns the
  // missing and unexpected keys (empty when strict), as PyTorch's _IncompatibleKeys, so that a
  // non-strict load can say what it left out. Shape mismatches throw either way, as in PyTorch.
  struct IncompatibleKeys {
    std::vector<std::string> missing_keys;
    std::vector<std::string> unexpected_keys;
  };
  IncompatibleKeys load_state_dict(const NamedTensors& state, bool strict = true);

  // Prints the module tree, one line per module: "LeNet(\n  (conv1): Conv2d(3, 6, kernel_size=[5, 5]...)".
  // Virtual for the containers that print otherwise (ModuleList folds runs of equal modules, as
  // torch's does).
  virtual std::string extra_repr() const { return ""; }
  virtual std::string repr(int indent = 0) const;

 protected:
  // Builds the copy for clone(): COLONY_CLONEABLE overrides it with nn::clone_module(*this);
  // containers, whose children are not made by a constructor, clone each child instead.
  virtual std::shared_ptr<Module> clone_module() const;
  // clone_module's second half: copies `src`'s parameter and buffer values (new tensors, through
  // set_data, so this module's members stay bound), flags and, recursively, its children's into
  // this freshly constructed module of the same class, which must have the same names and shapes.
  void copy_state_from(const Module& src);
  // A new tensor holding t's values (requires_grad kept), or the one made already in this clone()
  // when t is shared.
  static Tensor clone_tensor(const Tensor& t);
  // Inside clone(): the copy already made of `m`, or null.
  static std::shared_ptr<Module> cloned_already(const Module* m);
  void add_child(const std::string& name, std::shared_ptr<Module> child);
  template <typename T>
  friend std::shared_ptr<Module> clone_module(const T& self);
  // Unregisters parameter `name` and returns it (ParameterDict::pop); throws naming the module's
  // parameters when there is none of that name.
  Tensor remove_parameter(const std::string& name);

 private:
  void collect(const std::string& prefix, bool recurse, bool params, NamedTensors& out) const;
  // The same walk without the names, for parameters(): a training step calls it (clipping), and
  // building every dotted name took 0.2-0.4 % of the char GPT's 2-thread step on the main thread.
  void collect_unnamed(bool recurse, bool params, std::vector<Tensor>& out) const;
  void collect_modules(const std::string& prefix, std::set<const Module*>& seen,
                       std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out);
  NamedTensors params_;
  NamedTensors buffers_;
  std::set<std::string> non_persistent_;  // names in buffers_ left out of state_dict()
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

namespace detail {
template <typename T, typename = void>
struct has_options : std::false_type {};
template <typename T>
struct has_options<T, std::void_t<decltype(std::declval<const T&>().options)>>
    : std::is_constructible<T, decltype(std::declval<const T&>().options)> {};
// Refuses a clone of `self` built as its base class T, for a class derived from a cloneable one
// without a clone of its own.
void check_clone_type(const Module& self, const std::type_info& built);
}  // namespace detail

// The clone of a module of class T: T constructed anew (from self.options when T takes its options,
// else by default), then self's state copied in. What COLONY_CLONEABLE and Cloneable<T> call.
template <typename T>
std::shared_ptr<Module> clone_module(const T& self) {
  detail::check_clone_type(self, typeid(T));
  std::shared_ptr<T> copy;
  if constexpr (detail::has_options<T>::value) {
    copy = std::make_shared<T>(self.options);
  } else {
    static_assert(std::is_default_constructible_v<T>,
                  "clone: the module class needs an `options` member it can be constructed from, or a default "
                  "constructor; else override clone_module() to construct it");
    copy = std::make_shared<T>();
  }
  copy->copy_state_from(self);
  return copy;
}

// In a module class's body: gives it clone() (see Module::clone).
#define COLONY_CLONEABLE                                          \
 protected:                                                       \
  std::shared_ptr<::colony::nn::Module> clone_module() const override { \
    return ::colony::nn::clone_module(*this);                      \
  }                                                               \
                                                                  \
 public:

// libtorch's spelling for a model class: struct Net : nn::Cloneable<Net> { Net() { ... } };
// Net must be default-constructible or constructible from its `options` member.
template <typename Derived>
class Cloneable : public Module {
 protected:
  std::shared_ptr<Module> clone_module() const override { return ::colony::nn::clone_module(static_cast<const Derived&>(*this)); }
};

// clone() as the module's own type: auto copy = nn::clone(model); (a shared_ptr<Model>).
template <typename T>
std::shared_ptr<T> clone(const std::shared_ptr<T>& module) {
  return std::dynamic_pointer_cast<T>(module->clone());
}

// Replaces the data behind `dst` with `src` (shape, storage, dtype), keeping the TensorImpl —
// and so every handle to it — the same; the autograd flags stay (PyTorch's `param.data = ...`).
void set_data(Tensor& dst, const Tensor& src);

std::ostream& operator<<(std::ostream& os, const Module& m);

}  // namespace colony::nn
