// The examples' --amp flag: off (float32), bf16 (bfloat16 autocast) or fp16 (float16 autocast with
// dynamic loss scaling; bfloat16 has float32's range and needs no scaler, as in PyTorch).
#pragma once

#include <stdexcept>
#include <string>

#include "colony.h"

namespace lenet {

struct AmpMode {
  bool enabled = false;
  colony::DType dtype = colony::kBFloat16;

  static AmpMode parse(const std::string& flag) {
    if (flag == "off" || flag.empty()) return {};
    if (flag == "bf16") return {true, colony::kBFloat16};
    if (flag == "fp16") return {true, colony::kFloat16};
    throw std::invalid_argument("--amp: expected off, bf16 or fp16, got \"" + flag + "\"");
  }
  bool uses_scaler() const { return enabled && dtype == colony::kFloat16; }
  std::string name() const { return !enabled ? "off" : dtype == colony::kFloat16 ? "fp16" : "bf16"; }
};

}  // namespace lenet
