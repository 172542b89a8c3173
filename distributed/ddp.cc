#include "distributed/ddp.h"

#include <stdexcept>

#include "distributed/init.h"

namespace colony::dist {

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module) : module_(std::move(module)) {
  if (!module_) throw std::invalid_argument("DistributedDataParallel: module is null");
  if (get_world_size() > 1) {
    throw std::runtime_error("DistributedDataParallel: world size > 1 is not supported by this build yet");
  }
  // Registered as the child "module" so parameters(), state_dict() and train()/eval() reach the
  // wrapped model, with PyTorch's "module." prefix on names.
  register_module("module", module_);
}

}  // namespace colony::dist
