// Module weights as safetensors files, by state_dict name ("conv1.weight", ...), which PyTorch's
// safetensors.torch.load_file reads directly. Writes are atomic.
#pragma once

#include <map>
#include <string>

#include "nn/module.h"

namespace colony::nn {

void save(const Module& module, const std::string& path, const std::map<std::string, std::string>& metadata = {});
// Strict by default: missing, unexpected and mis-shaped tensors are listed in the error, which
// also names the file. Values are converted to each parameter's device and dtype.
void load(Module& module, const std::string& path, bool strict = true);

}  // namespace colony::nn
