// COLONY_ARG declares one field of an options struct with a chained setter and a getter, so
// defaults are visible where they are declared (PyTorch C++'s TORCH_ARG):
//   struct Conv2dOptions { COLONY_ARG(int64_t, stride) = 1; };
//   Conv2dOptions(3, 6, 5).stride(2).padding(1)
// The macro leaves the struct in `private:`; write `public:` before any member that follows it.
#pragma once

#define COLONY_ARG(T, name)                \
 public:                                   \
  auto& name(const T& new_value) {         \
    name##_ = new_value;                   \
    return *this;                          \
  }                                        \
  const T& name() const { return name##_; } \
                                           \
 private:                                  \
  T name##_
