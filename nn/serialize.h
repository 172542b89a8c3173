// Module weights as safetensors files, by state_dict name ("conv1.weight", ...), which PyTorch's
// safetensors.torch.load_file reads directly. Writes are atomic.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "nn/module.h"

namespace colony::nn {

void save(const Module& module, const std::string& path, const std::map<std::string, std::string>& metadata = {});
// Strict by default: missing, unexpected and mis-shaped tensors are listed in the error, which
// also names the file. Values are converted to each parameter's device and dtype. Returns the keys
// a non-strict load left out (Module::load_state_dict's).
Module::IncompatibleKeys load(Module& module, const std::string& path, bool strict = true);

// The same with the module handle every model is held by: nn::save(model, path) where model is a
// std::shared_ptr<Net>.
template <typename M>
void save(const std::shared_ptr<M>& module, const std::string& path,
          const std::map<std::string, std::string>& metadata = {}) {
  save(static_cast<const Module&>(*module), path, metadata);
}
template <typename M>
Module::IncompatibleKeys load(const std::shared_ptr<M>& module, const std::string& path, bool strict = true) {
  return load(static_cast<Module&>(*module), path, strict);
}

}  // namespace colony::nn
