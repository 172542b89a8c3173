// Typed options of a parameter group. Each optimizer has its own options struct (SGDOptions,
// AdamOptions, AdamWOptions) with named setters, so a misspelt option does not compile; groups,
// LR schedulers and checkpoints reach every optimizer's options through OptimizerOptions.
//
//   SGD opt(std::vector<ParamGroup>{{encoder_params}, {decoder_params, SGDOptions(0.01)}},
//           SGDOptions(0.1).momentum(0.9));
//   opt.param_groups()[1].options.as<SGDOptions>().momentum();   // 0.9 (inherited, see below)
//
// A group inherits every option it does not set, as in torch.optim: each options struct
// remembers which of its fields a setter (or its constructor's lr) set, and add_param_group fills
// the others from the optimizer's defaults. With defaults AdamWOptions(6e-4).betas(0.9, 0.95), a
// group of AdamWOptions().weight_decay(0.0) runs with lr 6e-4 and betas (0.9, 0.95), not with
// AdamWOptions()'s own lr 1e-3 and beta2 0.999.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace colony::optim {

// The options as named numbers, bools as 0/1: how checkpoints store them
// ("param_groups.<g>.<name>"), and what the common range check walks over.
using HyperParams = std::map<std::string, double>;

class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  // The struct's name ("SGDOptions"), for errors.
  virtual std::string type_name() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  virtual HyperParams to_map() const = 0;
  // Sets the options named in `values`; others keep their value, unknown names are ignored.
  virtual void update_from_map(const HyperParams& values) = 0;
  // Whether option `name` was set (by its setter, the constructor's lr, update_from_map or
  // inherit_unset), rather than left at the struct's default.
  virtual bool is_set(const std::string& name) const = 0;
  // Gives every option that was not set the value it has in `defaults` (options of the same type;
  // throws naming both types otherwise), then counts every option as set, as PyTorch's group dict
  // holds every key once the optimizer has filled it: a filled group moved to another optimizer
  // keeps its values.
  virtual void inherit_unset(const OptimizerOptions& defaults) = 0;
};

// COLONY_ARG for an optimizer's options struct (one deriving from detail::OptionsBase): the setter
// also records that the option was set, so that a parameter group inherits only the options it
// did not set. `name` must be the name the struct's fields() gives the option.
#define COLONY_OPTIM_ARG(T, name)          \
 public:                                   \
  auto& name(const T& new_value) {         \
    name##_ = new_value;                   \
    this->mark_set(#name);                 \
    return *this;                          \
  }                                        \
  const T& name() const { return name##_; } \
                                           \
 private:                                  \
  T name##_

// beta1 and beta2 (two COLONY_OPTIM_ARGs, their checkpoint names) with torch's pair spelling,
// betas({0.9, 0.99}) or betas(0.9, 0.99), for the options struct `Self`; ends in `private:`.
#define COLONY_OPTIM_BETAS(Self, default1, default2)                   \
  COLONY_OPTIM_ARG(double, beta1) = default1;                          \
  COLONY_OPTIM_ARG(double, beta2) = default2;                          \
                                                                       \
 public:                                                               \
  Self& betas(std::pair<double, double> b) { return betas(b.first, b.second); } \
  Self& betas(double b1, double b2) {                                  \
    beta1_ = b1;                                                       \
    beta2_ = b2;                                                       \
    this->mark_set("beta1");                                           \
    this->mark_set("beta2");                                           \
    return *this;                                                      \
  }                                                                    \
  std::pair<double, double> betas() const { return {beta1_, beta2_}; } \
                                                                       \
 private:

namespace detail {

// OptimizerOptions for an options struct `Self` that lists its fields once, in
//   template <class S, class Visit> static void fields(S& self, Visit&& visit)
// calling visit("name", self.name_) for each; the rest is derived from that list.
template <class Self>
class OptionsBase : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<Self>(self()); }
  std::string type_name() const override { return Self::kName; }
  double get_lr() const override { return self().lr(); }
  void set_lr(double lr) override { static_cast<Self&>(*this).lr(lr); }
  HyperParams to_map() const override {
    HyperParams out;
    Self::fields(self(), [&](const char* name, const auto& v) { out[name] = static_cast<double>(v); });
    return out;
  }
  void update_from_map(const HyperParams& values) override {
    Self::fields(static_cast<Self&>(*this), [&](const char* name, auto& v) {
      auto it = values.find(name);
      if (it == values.end()) return;
      v = static_cast<std::decay_t<decltype(v)>>(it->second);
      set_.insert(name);
    });
  }
  bool is_set(const std::string& name) const override { return set_.count(name) > 0; }
  void inherit_unset(const OptimizerOptions& defaults) override {
    auto* typed = dynamic_cast<const Self*>(&defaults);
    if (!typed) {
      throw std::invalid_argument(std::string("optimizer options: can't inherit unset options of ") + Self::kName +
                                  " from " + defaults.type_name());
    }
    // Both lists come from the same fields(), so they walk the same options in the same order.
    std::vector<std::pair<const char*, double>> from;
    Self::fields(*typed, [&](const char* name, const auto& v) { from.emplace_back(name, static_cast<double>(v)); });
    size_t i = 0;
    Self::fields(static_cast<Self&>(*this), [&](const char* name, auto& v) {
      if (!set_.count(name)) v = static_cast<std::decay_t<decltype(v)>>(from[i].second);
      set_.insert(name);
      ++i;
    });
  }

 protected:
  // Called by COLONY_OPTIM_ARG's setters (and by hand-written setters of several fields).
  void mark_set(const char* name) { set_.insert(name); }

 private:
  const Self& self() const { return static_cast<const Self&>(*this); }
  // The options set so far (fields() names).
  std::set<std::string> set_;
};

template <class>
inline constexpr bool kAlwaysFalse = false;

}  // namespace detail

// The options of one parameter group: empty (the optimizer's defaults are used) or one
// optimizer's options struct, read and changed through as<T>(); once the group is in an
// optimizer, the options it did not set hold the optimizer's defaults.
class GroupOptions {
 public:
  GroupOptions() = default;
  template <class O, class = std::enable_if_t<std::is_base_of_v<OptimizerOptions, O>>>
  GroupOptions(const O& options) : options_(std::make_unique<O>(options)) {}  // NOLINT: {params, SGDOptions(..)}
  explicit GroupOptions(std::unique_ptr<OptimizerOptions> options) : options_(std::move(options)) {}
  GroupOptions(const GroupOptions& o) : options_(o.options_ ? o.options_->clone() : nullptr) {}
  GroupOptions(GroupOptions&&) noexcept = default;
  GroupOptions& operator=(const GroupOptions& o) {
    options_ = o.options_ ? o.options_->clone() : nullptr;
    return *this;
  }
  GroupOptions& operator=(GroupOptions&&) noexcept = default;

  bool has_value() const { return options_ != nullptr; }
  // The options as their struct; throws naming both types when they are another optimizer's.
  template <class O>
  O& as() {
    auto* typed = dynamic_cast<O*>(&get());
    if (!typed) throw_wrong_type(get(), O::kName);
    return *typed;
  }
  template <class O>
  const O& as() const {
    auto* typed = dynamic_cast<const O*>(&get());
    if (!typed) throw_wrong_type(get(), O::kName);
    return *typed;
  }
  OptimizerOptions& get();
  const OptimizerOptions& get() const;

  // Groups used to hold a map from names to numbers; the old spellings name the new ones.
  template <class T = void>
  GroupOptions(std::initializer_list<std::pair<const char*, double>>) {  // NOLINT
    static_assert(detail::kAlwaysFalse<T>,
                  "parameter group options are typed: write {params, SGDOptions(0.5)} (or AdamOptions, "
                  "AdamWOptions), not {params, {{\"lr\", 0.5}}}");
  }
  template <class K>
  double at(const K&) const {
    static_assert(detail::kAlwaysFalse<K>,
                  "parameter group options are typed: write group.options.as<SGDOptions>().momentum() "
                  "(or optimizer.lr(g) for the learning rate), not group.options.at(\"momentum\")");
    return 0;
  }
  template <class K>
  double& operator[](const K&) {
    static_assert(detail::kAlwaysFalse<K>,
                  "parameter group options are typed: write group.options.as<SGDOptions>().momentum(0.8) "
                  "(or optimizer.set_lr(g, lr)), not group.options[\"momentum\"] = 0.8");
    static double unused;
    return unused;
  }

 private:
  [[noreturn]] static void throw_wrong_type(const OptimizerOptions& o, const std::string& wanted);
  std::unique_ptr<OptimizerOptions> options_;
};

}  // namespace colony::optim
