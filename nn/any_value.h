// nn::AnyValue: one value of any copyable type, the currency of nn::AnyModule. A module's forward
// arguments and its result travel as AnyValues when the caller does not know the module's type
// (containers, generic training code); get<T>() hands the value back as T, with an error that
// names both types when the value is something else.
//
// Conversions, so a call reads as it would in Python: an arithmetic value converts to another
// arithmetic type when nothing is lost (any number to a floating type, an integer to an integer
// type that holds it; never to or from bool), and a string literal is kept as std::string.
// Everything else must match exactly (after decay: a const Tensor& parameter takes a Tensor).
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "base/type_name.h"

namespace colony::nn {

class AnyValue {
 public:
  AnyValue() = default;
  // Stores a copy (or the moved value) of `value`, decayed: a const Tensor& is stored as Tensor,
  // a char array or char pointer as std::string.
  template <typename T, typename = std::enable_if_t<!std::is_same_v<std::decay_t<T>, AnyValue>>>
  explicit AnyValue(T&& value) : content_(make(std::forward<T>(value))) {}
  AnyValue(const AnyValue& other) : content_(other.content_ ? other.content_->clone() : nullptr) {}
  AnyValue& operator=(const AnyValue& other) {
    if (this != &other) content_ = other.content_ ? other.content_->clone() : nullptr;
    return *this;
  }
  AnyValue(AnyValue&&) noexcept = default;
  AnyValue& operator=(AnyValue&&) noexcept = default;

  bool has_value() const { return content_ != nullptr; }
  // typeid of the stored type; typeid(void) when empty.
  const std::type_info& type_info() const { return content_ ? content_->type() : typeid(void); }
  // type_name() of the stored type ("Tensor", "double", ...), "nothing" when empty.
  std::string type_name() const { return content_ ? colony::type_name(content_->type()) : "nothing"; }

  // True when get<T>() would succeed (the exact type, or one of the conversions above).
  template <typename T>
  bool can_get() const {
    return exact<T>() != nullptr || converted<std::decay_t<T>>().has_value();
  }
  // The stored value itself when its type is exactly T (after decay), else null.
  template <typename T>
  std::decay_t<T>* try_get() {
    return const_cast<std::decay_t<T>*>(exact<T>());
  }
  // The value as T; std::invalid_argument naming both types when it is not one.
  template <typename T>
  std::decay_t<T> get() const& {
    if (const auto* v = exact<T>()) return *v;
    return convert_or_throw<std::decay_t<T>>();
  }
  // From a temporary, the stored value is moved out rather than copied.
  template <typename T>
  std::decay_t<T> get() && {
    if (auto* v = const_cast<std::decay_t<T>*>(exact<T>())) return std::move(*v);
    return convert_or_throw<std::decay_t<T>>();
  }

 private:
  struct Placeholder {
    virtual ~Placeholder() = default;
    virtual const std::type_info& type() const = 0;
    virtual std::unique_ptr<Placeholder> clone() const = 0;
    // The value as a number, for the arithmetic conversions; nullopt for a non-arithmetic type.
    // long double holds every int64_t and uint64_t exactly (a 64-bit mantissa on x86-64).
    virtual std::optional<long double> number(bool* integral) const = 0;
  };
  template <typename V>
  struct Holder final : Placeholder {
    explicit Holder(V v) : value(std::move(v)) {}
    const std::type_info& type() const override { return typeid(V); }
    std::unique_ptr<Placeholder> clone() const override { return std::make_unique<Holder>(value); }
    std::optional<long double> number(bool* integral) const override {
      if constexpr (std::is_arithmetic_v<V> && !std::is_same_v<V, bool>) {
        *integral = std::is_integral_v<V>;
        return static_cast<long double>(value);
      } else {
        return std::nullopt;
      }
    }
    V value;
  };

  template <typename T>
  static std::unique_ptr<Placeholder> make(T&& value) {
    using V = std::decay_t<T>;
    static_assert(std::is_copy_constructible_v<V>, "nn::AnyValue holds copyable values only");
    if constexpr (std::is_same_v<V, const char*> || std::is_same_v<V, char*>) {
      return std::make_unique<Holder<std::string>>(std::string(value));
    } else {
      return std::make_unique<Holder<V>>(std::forward<T>(value));
    }
  }

  template <typename T>
  const std::decay_t<T>* exact() const {
    using V = std::decay_t<T>;
    if (!content_ || content_->type() != typeid(V)) return nullptr;
    return &static_cast<const Holder<V>*>(content_.get())->value;
  }

  template <typename V>
  std::optional<V> converted() const {
    if constexpr (std::is_arithmetic_v<V> && !std::is_same_v<V, bool>) {
      if (!content_) return std::nullopt;
      bool integral = false;
      std::optional<long double> n = content_->number(&integral);
      if (!n) return std::nullopt;
      if constexpr (std::is_floating_point_v<V>) {
        return static_cast<V>(*n);
      } else {
        if (!integral || *n < static_cast<long double>(std::numeric_limits<V>::lowest()) ||
            *n > static_cast<long double>(std::numeric_limits<V>::max()))
          return std::nullopt;
        return static_cast<V>(*n);
      }
    } else {
      return std::nullopt;
    }
  }

  template <typename V>
  V convert_or_throw() const {
    if (std::optional<V> v = converted<V>()) return *v;
    throw std::invalid_argument("AnyValue holds " + describe() + ", not " + colony::type_name<V>());
  }

  // "a double (3.5)"-style description for messages: the type, and the value when it is a number.
  std::string describe() const;

  std::unique_ptr<Placeholder> content_;
};

}  // namespace colony::nn
