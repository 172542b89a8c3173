// char_gpt's checkpoints, in two files so that the weights are what a PyTorch user loads:
//   PATH        the model's state_dict under nanoGPT's names ("transformer.wte.weight", ...,
//               "lm_head.weight"; the tied head under both of its names, as PyTorch's state_dict
//               lists it), which nanoGPT's model loads with
//               model.load_state_dict(safetensors.torch.load_file(PATH)); the metadata carries the
//               step and what the program put in TrainingState::extra (model configuration, vocabulary);
//   PATH.train  the rest of the training state (optimizer, GradScaler, step, random generator) in
//               optim::save_checkpoint's format, with no model tensors.
// Each is written atomically, the training state first; both carry the step, and loading refuses
// a pair whose steps differ (a run stopped between the two writes).
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "colony.h"
#include "examples/char_gpt/gpt.h"

namespace char_gpt {

inline std::string training_state_path(const std::string& path) { return path + ".train"; }

inline void save_checkpoint(const std::string& path, const GPT& model, const optim::Optimizer& optimizer,
                            const optim::TrainingState& state, const optim::GradScaler* scaler) {
  const nn::Module no_model;  // the weights go to `path`, once
  optim::save_checkpoint(training_state_path(path), no_model, optimizer, state, scaler);
  std::map<std::string, std::string> meta = state.extra;
  meta["format"] = "pt";  // what safetensors.torch writes: tensors laid out as PyTorch's
  meta["step"] = std::to_string(state.step);
  io::save_safetensors(path, model.state_dict(), meta);
}

// Restores the model, optimizer and scaler; returns the counters and extra metadata.
inline optim::TrainingState load_checkpoint(const std::string& path, GPT& model, optim::Optimizer& optimizer,
                                            optim::GradScaler* scaler) {
  const std::string train = training_state_path(path);
  if (!std::filesystem::exists(train))
    throw std::invalid_argument("--resume " + path + ": no training state " + train +
                                " beside the weights (char_gpt --checkpoint writes both files)");
  io::SafetensorsContents weights = io::load_safetensors(path);
  nn::Module no_model;
  optim::TrainingState s = optim::load_checkpoint(train, no_model, optimizer, scaler);
  auto step = weights.metadata.find("step");
  if (step == weights.metadata.end() || step->second != std::to_string(s.step))
    throw std::invalid_argument(path + " holds the weights of step " +
                                (step == weights.metadata.end() ? std::string("(none recorded)") : step->second) +
                                " but " + train + " the training state of step " + std::to_string(s.step) +
                                ": the two files belong to different runs or steps");
  try {
    model.load_state_dict(weights.tensors);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
  return s;
}

}  // namespace char_gpt
