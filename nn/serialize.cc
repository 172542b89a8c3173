#include "nn/serialize.h"

#include <stdexcept>

#include "nn/safetensors.h"

namespace colony::nn {

void save(const Module& module, const std::string& path, const std::map<std::string, std::string>& metadata) {
  io::save_safetensors(path, module.state_dict(), metadata);
}

void load(Module& module, const std::string& path, bool strict) {
  io::SafetensorsContents c = io::load_safetensors(path);
  try {
    module.load_state_dict(c.tensors, strict);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
}

}  // namespace colony::nn
