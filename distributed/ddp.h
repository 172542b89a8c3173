// DistributedDataParallel: wraps a module so that every rank trains the same replica. With one
// process (the only world size this stage accepts, see init.h) it forwards to the module; the
// reducer with bucketed, overlapped all-reduce plugs in behind the same interface.
#pragma once

#include <memory>

#include "nn/module.h"

namespace colony::dist {

class DistributedDataParallel : public nn::Module {
 public:
  explicit DistributedDataParallel(std::shared_ptr<nn::Module> module);
  Tensor forward(const Tensor& input) override { return module_->forward(input); }
  std::shared_ptr<nn::Module> module() const { return module_; }

 private:
  std::shared_ptr<nn::Module> module_;
};

}  // namespace colony::dist
