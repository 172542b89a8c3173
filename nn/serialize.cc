#include "nn/serialize.h"

#include <set>
#include <stdexcept>

#include "nn/safetensors.h"

namespace colony::nn {

void save(const Module& module, const std::string& path, const std::map<std::string, std::string>& metadata) {
  // A tensor registered under several names (a tied weight) is written once, under its first name,
  // as safetensors.torch.save_model does: load() fills every name from it, which keeps the tie.
  NamedTensors unique;
  std::set<const TensorImpl*> seen;
  for (auto& entry : module.state_dict())
    if (seen.insert(entry.second.impl()).second) unique.push_back(std::move(entry));
  io::save_safetensors(path, unique, metadata);
}

Module::IncompatibleKeys load(Module& module, const std::string& path, bool strict) {
  io::SafetensorsContents c = io::load_safetensors(path);
  try {
    return module.load_state_dict(c.tensors, strict);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
}

}  // namespace colony::nn
