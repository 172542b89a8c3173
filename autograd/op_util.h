// Shared by the op files: the names a backward closure uses. Not part of the public API.
#pragma once

#include <vector>

#include "autograd/function_node.h"
#include "tensor/raw_ops.h"

namespace colony::autograd::detail {

using Grads = std::vector<Tensor>;
using Needs = std::vector<bool>;

// A 0-d tensor of `value` with `like`'s dtype and device, to broadcast in where() and friends.
inline Tensor scalar_like(double value, const Tensor& like) {
  return raw::scalar_tensor(value, TensorOptions(like.dtype()).device(like.device()));
}

inline Tensor zeros_of(const Shape& shape, const Tensor& like) {
  return raw::zeros(shape, TensorOptions(like.dtype()).device(like.device()));
}

// Saves `t` only when `wanted`, so an op does not keep alive what no gradient formula reads.
inline SavedTensor save_if(bool wanted, const Tensor& t) { return wanted ? SavedTensor(t) : SavedTensor(); }

}  // namespace colony::autograd::detail
