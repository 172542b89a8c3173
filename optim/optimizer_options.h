// Typed options of a parameter group. Each optimizer has its own options struct (SGDOptions,
// AdamOptions, AdamWOptions) with named setters, so a misspelt option does not compile; groups,
// LR schedulers and checkpoints reach every optimizer's options through OptimizerOptions.
//
//   SGD opt(std::vector<ParamGroup>{{encoder_params}, {decoder_params, SGDOptions(0.01)}},
//           SGDOptions(0.1).momentum(0.9));
//   opt.param_groups()[1].options.as<SGDOptions>().momentum();   // 0 (the group's own options)
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

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
};

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
      if (it != values.end()) v = static_cast<std::decay_t<decltype(v)>>(it->second);
    });
  }

 private:
  const Self& self() const { return static_cast<const Self&>(*this); }
};

template <class>
inline constexpr bool kAlwaysFalse = false;

}  // namespace detail

// The options of one parameter group: empty (the optimizer's defaults are used) or one
// optimizer's options struct, read and changed through as<T>().
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
