// nn::AnyModule: a handle to a module of any type whose forward has any signature, called without
// knowing the type (libtorch's AnyModule, by type erasure rather than a common virtual). It is
// what Sequential, ModuleList and ModuleDict hold, so an attention block with a mask or a cell
// with state can live in a container and still be called:
//
//   AnyModule attn = std::make_shared<MaskedAttention>(64);   // Tensor forward(const Tensor&, const Tensor&)
//   Tensor y = attn.forward(x, mask);
//   AnyModule cell = std::make_shared<RNNCell>(8);             // std::tuple<Tensor, Tensor> forward(Tensor, Tensor)
//   auto [h, c] = cell.forward<std::tuple<Tensor, Tensor>>(x, h0);
//
// The arguments are checked at run time against the forward the module's type declares; a wrong
// count or type is a ForwardArgumentError naming the module and the signature it expected
// ("MaskedAttention::forward(const Tensor&, const Tensor&) -> Tensor: argument 2 must be Tensor,
// not double"). Numbers convert where nothing is lost (any_value.h). Trailing std::optional
// parameters may be left out (they arrive as std::nullopt), which is how a forward says that an
// argument has a default. Which forward is called, by what the module's class declares:
//   - exactly one forward (the usual case, including a layer's Tensor forward(const Tensor&)):
//     that one, whatever its parameters and return type;
//   - a forward_values(std::vector<AnyValue>) hook and no single forward (Sequential, whose
//     forward is a template): the hook, which takes whatever its first module takes;
//   - several forward overloads: the virtual Module::forward(const Tensor&). Hold the module by
//     its own type to call the others.
// A forward must return a value and take no non-const references (arguments are the caller's
// copies); arguments and results must be copyable.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "nn/any_value.h"
#include "nn/module.h"
#include "base/type_name.h"

namespace colony::nn {

// The arguments given to AnyModule::forward do not fit the module's forward (count or types).
class ForwardArgumentError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Boxes call arguments for AnyModule::forward_values: pack_values(x, mask).
template <typename... Args>
std::vector<AnyValue> pack_values(Args&&... args) {
  std::vector<AnyValue> out;
  out.reserve(sizeof...(Args));
  (out.emplace_back(std::forward<Args>(args)), ...);
  return out;
}

// `module` as a T, or an std::invalid_argument saying what `where` holds instead ("ModuleList[1]
// is a ReLU, not a Linear"). Used by every typed accessor (AnyModule::ptr<T>, containers' ptr<T>).
template <typename T>
std::shared_ptr<T> module_cast(const std::shared_ptr<Module>& module, const std::string& where) {
  static_assert(std::is_base_of_v<Module, T>, "module_cast<T>: T must be a module type (derived from nn::Module)");
  if (auto typed = std::dynamic_pointer_cast<T>(module)) return typed;
  throw std::invalid_argument(where + " is a " + module->name() + ", not a " + type_name<T>());
}

// A forward's result as R, or an error that says what it returned and how to ask for that.
template <typename R>
R forward_result(AnyValue&& out, const std::string& signature) {
  if (!out.can_get<R>())
    throw std::invalid_argument(signature + " returned " + out.type_name() + ", not " + type_name<R>() +
                                ": call forward<" + out.type_name() + ">(...)");
  return std::move(out).get<R>();
}

namespace detail {

// The type-erased call, one implementation per way of calling (see the header comment).
class AnyForward {
 public:
  virtual ~AnyForward() = default;
  virtual AnyValue forward(std::vector<AnyValue>&& arguments) = 0;
  // True when forward takes one Tensor and returns a Tensor: forward_tensor then calls it without
  // boxing (Sequential of plain layers runs exactly as a loop of virtual calls).
  virtual bool maps_tensor_to_tensor() const { return false; }
  virtual Tensor forward_tensor(const Tensor& input) = 0;
  virtual std::shared_ptr<Module> module() const = 0;
  // The same call on `other`, a module of the same class (a clone of module()).
  virtual std::shared_ptr<AnyForward> with_module(std::shared_ptr<Module> other) const = 0;
  // "MaskedAttention::forward(const Tensor&, const Tensor&) -> Tensor".
  virtual std::string signature() const = 0;
};

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};

// How many leading arguments a forward requires: all up to its last non-optional parameter.
template <typename... Args>
constexpr size_t required_arguments() {
  constexpr bool is_opt[] = {is_optional<std::decay_t<Args>>::value..., false};
  size_t required = 0;
  for (size_t i = 0; i < sizeof...(Args); ++i)
    if (!is_opt[i]) required = i + 1;
  return required;
}

template <typename M, typename Fn, typename R, typename... Args>
class TypedForward final : public AnyForward {
  static_assert(!std::is_void_v<R>, "AnyModule: the module's forward returns void; return what it computes");
  static_assert(((!std::is_lvalue_reference_v<Args> || std::is_const_v<std::remove_reference_t<Args>>)&&...),
                "AnyModule: the module's forward takes a non-const reference; take a value or a const reference");
  static constexpr size_t kArity = sizeof...(Args);
  static constexpr size_t kRequired = required_arguments<Args...>();

 public:
  TypedForward(std::shared_ptr<M> module, Fn fn) : module_(std::move(module)), fn_(fn) {}

  AnyValue forward(std::vector<AnyValue>&& arguments) override {
    if (arguments.size() < kRequired || arguments.size() > kArity) throw ForwardArgumentError(count_error(arguments.size()));
    return call(arguments, std::index_sequence_for<Args...>{});
  }
  bool maps_tensor_to_tensor() const override {
    return kArity == 1 && std::is_same_v<std::decay_t<R>, Tensor> && (std::is_same_v<std::decay_t<Args>, Tensor> && ...);
  }
  Tensor forward_tensor(const Tensor& input) override {
    if constexpr (kArity == 1 && std::is_same_v<std::decay_t<R>, Tensor>) {
      using A = std::tuple_element_t<0, std::tuple<Args...>>;
      if constexpr (std::is_same_v<A, const Tensor&>) {
        return (module_.get()->*fn_)(input);
      } else if constexpr (std::is_same_v<std::decay_t<A>, Tensor>) {
        return (module_.get()->*fn_)(Tensor(input));  // by value or Tensor&&: the callee gets its own handle
      }
    }
    return forward_result<Tensor>(forward(pack_values(input)), signature());
  }
  std::shared_ptr<Module> module() const override { return module_; }
  std::shared_ptr<AnyForward> with_module(std::shared_ptr<Module> other) const override {
    return std::make_shared<TypedForward>(std::dynamic_pointer_cast<M>(std::move(other)), fn_);
  }
  std::string signature() const override {
    std::string args;
    ((args += (args.empty() ? "" : ", ") + type_name<Args>()), ...);
    return module_->name() + "::forward(" + args + ") -> " + type_name<std::decay_t<R>>();
  }

 private:
  template <size_t... I>
  AnyValue call(std::vector<AnyValue>& arguments, std::index_sequence<I...>) {
    // A braced list evaluates left to right, so argument 1's error comes before argument 2's.
    std::tuple<std::decay_t<Args>...> values{take<Args>(arguments, I)...};
    return AnyValue((module_.get()->*fn_)(std::move(std::get<I>(values))...));
  }

  template <typename A>
  std::decay_t<A> take(std::vector<AnyValue>& arguments, size_t i) const {
    using V = std::decay_t<A>;
    if constexpr (is_optional<V>::value) {
      if (i >= arguments.size() || arguments[i].try_get<std::nullopt_t>()) return std::nullopt;
      if (arguments[i].can_get<V>()) return std::move(arguments[i]).get<V>();
      if (arguments[i].can_get<typename V::value_type>()) return std::move(arguments[i]).get<typename V::value_type>();
    } else {
      if (arguments[i].can_get<V>()) return std::move(arguments[i]).get<V>();
    }
    throw ForwardArgumentError(signature() + ": argument " + std::to_string(i + 1) + " must be " + type_name<V>() +
                               ", not " + arguments[i].type_name());
  }

  std::string count_error(size_t given) const {
    std::string takes = kRequired == kArity ? std::to_string(kArity)
                                            : std::to_string(kRequired) + " to " + std::to_string(kArity);
    return signature() + " takes " + takes + " argument" + (kArity == 1 ? "" : "s") + ", but " +
           std::to_string(given) + (given == 1 ? " was" : " were") + " given";
  }

  std::shared_ptr<M> module_;
  Fn fn_;
};

// For a module that takes any arguments through forward_values (Sequential).
template <typename M>
class ValuesForward final : public AnyForward {
 public:
  explicit ValuesForward(std::shared_ptr<M> module) : module_(std::move(module)) {}
  AnyValue forward(std::vector<AnyValue>&& arguments) override { return module_->forward_values(std::move(arguments)); }
  Tensor forward_tensor(const Tensor& input) override {
    return forward_result<Tensor>(forward(pack_values(input)), signature());
  }
  std::shared_ptr<Module> module() const override { return module_; }
  std::shared_ptr<AnyForward> with_module(std::shared_ptr<Module> other) const override {
    return std::make_shared<ValuesForward>(std::dynamic_pointer_cast<M>(std::move(other)));
  }
  std::string signature() const override { return module_->name() + "::forward(...)"; }

 private:
  std::shared_ptr<M> module_;
};

template <typename M, typename = void>
struct has_single_forward : std::false_type {};
template <typename M>
struct has_single_forward<M, std::void_t<decltype(&M::forward)>> : std::true_type {};

template <typename M, typename = void>
struct has_values_forward : std::false_type {};
template <typename M>
struct has_values_forward<M, std::void_t<decltype(std::declval<M&>().forward_values(std::vector<AnyValue>()))>>
    : std::true_type {};

// One overload per kind of member function pointer &M::forward can be.
template <typename M, typename R, typename C, typename... Args>
std::shared_ptr<AnyForward> typed_forward(std::shared_ptr<M> m, R (C::*fn)(Args...)) {
  return std::make_shared<TypedForward<M, decltype(fn), R, Args...>>(std::move(m), fn);
}
template <typename M, typename R, typename C, typename... Args>
std::shared_ptr<AnyForward> typed_forward(std::shared_ptr<M> m, R (C::*fn)(Args...) const) {
  return std::make_shared<TypedForward<M, decltype(fn), R, Args...>>(std::move(m), fn);
}
template <typename M, typename R, typename C, typename... Args>
std::shared_ptr<AnyForward> typed_forward(std::shared_ptr<M> m, R (C::*fn)(Args...) noexcept) {
  return std::make_shared<TypedForward<M, decltype(fn), R, Args...>>(std::move(m), fn);
}
template <typename M, typename R, typename C, typename... Args>
std::shared_ptr<AnyForward> typed_forward(std::shared_ptr<M> m, R (C::*fn)(Args...) const noexcept) {
  return std::make_shared<TypedForward<M, decltype(fn), R, Args...>>(std::move(m), fn);
}

template <typename M>
std::shared_ptr<AnyForward> any_forward_for(std::shared_ptr<M> m) {
  static_assert(std::is_base_of_v<Module, M>, "AnyModule holds modules: classes derived from nn::Module");
  if constexpr (has_single_forward<M>::value) {
    return typed_forward(std::move(m), &M::forward);
  } else if constexpr (has_values_forward<M>::value) {
    return std::make_shared<ValuesForward<M>>(std::move(m));
  } else {
    return typed_forward(std::shared_ptr<Module>(std::move(m)), &Module::forward);
  }
}

}  // namespace detail

class AnyModule {
 public:
  // Empty: holds no module (forward and ptr throw).
  AnyModule() = default;
  // Implicit, so a container takes any module handle: list->push_back(std::make_shared<Attention>()).
  // The forward called is chosen by M, the handle's static type (see the header comment); a
  // std::shared_ptr<Module> is called through the virtual forward(const Tensor&).
  template <typename M>
  AnyModule(std::shared_ptr<M> module)  // NOLINT(google-explicit-constructor)
      : call_(module ? detail::any_forward_for(std::move(module)) : throw_null()) {}

  // Calls the module's forward with these arguments, its result as R (Tensor unless asked).
  template <typename R = Tensor, typename... Args>
  R forward(Args&&... args) const {
    if constexpr (std::is_same_v<R, Tensor> && sizeof...(Args) == 1) {
      if constexpr ((std::is_same_v<std::decay_t<Args>, Tensor> && ...)) {
        if (checked().maps_tensor_to_tensor()) return checked().forward_tensor(args...);
      }
    }
    return forward_result<R>(any_forward(std::forward<Args>(args)...), signature());
  }
  // The same, with the result left boxed (chaining modules whose types the caller does not know).
  template <typename... Args>
  AnyValue any_forward(Args&&... args) const {
    return forward_values(pack_values(std::forward<Args>(args)...));
  }
  // The same, with the arguments boxed too.
  AnyValue forward_values(std::vector<AnyValue> arguments) const { return checked().forward(std::move(arguments)); }

  // True when forward takes one Tensor and returns one (every layer of Colony's).
  bool maps_tensor_to_tensor() const { return checked().maps_tensor_to_tensor(); }
  // "MaskedAttention::forward(const Tensor&, const Tensor&) -> Tensor".
  std::string signature() const { return checked().signature(); }

  std::shared_ptr<Module> ptr() const { return checked().module(); }
  // The module as a T; an error naming both types when it is not one.
  template <typename T>
  std::shared_ptr<T> ptr() const {
    return module_cast<T>(ptr(), "AnyModule's module");
  }
  template <typename T>
  T& get() const {
    return *ptr<T>();
  }
  bool is_empty() const { return call_ == nullptr; }
  // An AnyModule holding a deep copy of the module (libtorch's AnyModule::clone; see
  // Module::clone), called as this one is.
  AnyModule clone() const { return with_module(ptr()->clone()); }
  // The same call on `other`, a module of the held module's class (what containers' clones use).
  AnyModule with_module(std::shared_ptr<Module> other) const {
    AnyModule out;
    out.call_ = checked().with_module(std::move(other));
    return out;
  }

 private:
  [[noreturn]] static std::shared_ptr<detail::AnyForward> throw_null();
  detail::AnyForward& checked() const;

  // Shared: copies of an AnyModule are handles to one module, as copies of its shared_ptr are (and
  // so calling through a const AnyModule is allowed, as through a const shared_ptr).
  std::shared_ptr<detail::AnyForward> call_;
};

// A name and any module, for building named containers: Sequential({{"attn", attn}, {"mlp", mlp}}).
struct NamedAnyModule {
  template <typename M>
  NamedAnyModule(std::string name, std::shared_ptr<M> module) : name(std::move(name)), module(std::move(module)) {}
  std::string name;
  AnyModule module;
};

}  // namespace colony::nn
