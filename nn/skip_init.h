// nn::utils::skip_init<M>(args...) (torch.nn.utils.skip_init): the module M(args...) built without
// initializing its parameters, for a module whose values come from elsewhere next (load_state_dict,
// a checkpoint, init:: functions of one's own). Nothing is drawn from any generator and no time goes
// into filling tensors that are overwritten; the parameters hold whatever memory they were given
// until then, as PyTorch's do. Buffers made with values (BatchNorm's running statistics) keep them.
#pragma once

#include <memory>
#include <utility>

#include "nn/init.h"

namespace colony::nn::utils {

template <typename M, typename... Args>
std::shared_ptr<M> skip_init(Args&&... args) {
  init::SkipInitGuard skip;
  return std::make_shared<M>(std::forward<Args>(args)...);
}

}  // namespace colony::nn::utils
