#include "optim/checkpoint.h"

#include <limits>
#include <stdexcept>

#include "nn/safetensors.h"

namespace colony::optim {
namespace {

const std::string kModel = "model.";
const std::string kOptim = "optim.";
const std::string kAmp = "amp.";

// A decimal counter from the metadata, at most `max`. Digits only: std::stoull would take "-1"
// as 2^64-1 and " +5" as 5, and an epoch of "-1" or 2^63 (negative once an int64) made a resumed
// run count its epochs up from far below zero, for ever.
uint64_t parse_counter(const std::map<std::string, std::string>& meta, const std::string& key, const std::string& path,
                       uint64_t max) {
  auto it = meta.find(key);
  if (it == meta.end()) throw std::runtime_error("checkpoint " + path + ": metadata has no \"" + key + "\"");
  const std::string& text = it->second;
  uint64_t v = 0;
  bool ok = !text.empty() && text.size() <= 20;
  for (char c : text) {
    if (!ok) break;
    ok = c >= '0' && c <= '9' && v <= (max - static_cast<uint64_t>(c - '0')) / 10;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok) {
    throw std::runtime_error("checkpoint " + path + ": metadata \"" + key + "\" = \"" + text +
                             "\" is not a decimal integer in [0, " + std::to_string(max) + "]");
  }
  return v;
}

}  // namespace

void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer& optimizer, TrainingState state,
                     const GradScaler* scaler) {
  state.rng_seed = default_generator().seed();
  state.rng_offset = default_generator().offset();
  io::NamedTensors tensors;
  for (auto& [n, t] : model.state_dict()) tensors.emplace_back(kModel + n, t);
  for (auto& [n, t] : optimizer.state_dict()) tensors.emplace_back(kOptim + n, t);
  if (scaler) {
    for (auto& [n, t] : scaler->state_dict()) tensors.emplace_back(kAmp + n, t);
  }
  std::map<std::string, std::string> meta = state.extra;
  meta["format"] = "colony-checkpoint-1";
  meta["epoch"] = std::to_string(state.epoch);
  meta["step"] = std::to_string(state.step);
  meta["rng_seed"] = std::to_string(state.rng_seed);
  meta["rng_offset"] = std::to_string(state.rng_offset);
  if (state.world_size > 0) {
    meta["epoch_samples"] = std::to_string(state.epoch_samples);
    meta["data_seed"] = std::to_string(state.data_seed);
    meta["world_size"] = std::to_string(state.world_size);
    meta["batch_size"] = std::to_string(state.batch_size);
  }
  io::save_safetensors(path, tensors, meta);
}

TrainingState load_checkpoint(const std::string& path, nn::Module& model, Optimizer& optimizer, GradScaler* scaler) {
  io::SafetensorsContents c = io::load_safetensors(path);
  auto fmt = c.metadata.find("format");
  if (fmt == c.metadata.end() || fmt->second != "colony-checkpoint-1") {
    throw std::runtime_error("checkpoint " + path + ": not a Colony training checkpoint (metadata \"format\" is " +
                             (fmt == c.metadata.end() ? std::string("missing") : "\"" + fmt->second + "\"") +
                             "); for plain weights use nn::load");
  }
  io::NamedTensors model_state, optim_state, amp_state;
  for (auto& [n, t] : c.tensors) {
    if (n.rfind(kModel, 0) == 0) {
      model_state.emplace_back(n.substr(kModel.size()), t);
    } else if (n.rfind(kOptim, 0) == 0) {
      optim_state.emplace_back(n.substr(kOptim.size()), t);
    } else if (n.rfind(kAmp, 0) == 0) {
      amp_state.emplace_back(n.substr(kAmp.size()), t);
    }
  }
  TrainingState s;
  constexpr auto kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  constexpr auto kUInt64Max = std::numeric_limits<uint64_t>::max();
  s.epoch = static_cast<int64_t>(parse_counter(c.metadata, "epoch", path, kInt64Max));
  s.step = static_cast<int64_t>(parse_counter(c.metadata, "step", path, kInt64Max));
  s.rng_seed = parse_counter(c.metadata, "rng_seed", path, kUInt64Max);
  s.rng_offset = parse_counter(c.metadata, "rng_offset", path, kUInt64Max);
  if (c.metadata.count("world_size") != 0) {
    s.world_size = static_cast<int64_t>(parse_counter(c.metadata, "world_size", path, kInt64Max));
    s.batch_size = static_cast<int64_t>(parse_counter(c.metadata, "batch_size", path, kInt64Max));
    s.epoch_samples = static_cast<int64_t>(parse_counter(c.metadata, "epoch_samples", path, kInt64Max));
    s.data_seed = parse_counter(c.metadata, "data_seed", path, kUInt64Max);
    if (s.world_size == 0 || s.batch_size == 0) {
      throw std::runtime_error("checkpoint " + path + ": metadata world_size " + std::to_string(s.world_size) +
                               " and batch_size " + std::to_string(s.batch_size) + " must both be at least 1");
    }
  }
  try {
    model.load_state_dict(model_state);
    optimizer.load_state_dict(optim_state);
    if (scaler && scaler->is_enabled()) {
      if (amp_state.empty()) {
        throw std::invalid_argument("holds no GradScaler state (saved by a run without loss scaling?)");
      }
      scaler->load_state_dict(amp_state);
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("checkpoint " + path + ": " + e.what());
  }
  default_generator().set_state(s.rng_seed, s.rng_offset);
  for (auto& [k, v] : c.metadata) {
    if (k != "format" && k != "epoch" && k != "step" && k != "rng_seed" && k != "rng_offset" &&
        k != "epoch_samples" && k != "data_seed" && k != "world_size" && k != "batch_size")
      s.extra[k] = v;
  }
  return s;
}

int64_t resume_position(const TrainingState& s, const std::string& path, int64_t epoch_size, uint64_t data_seed,
                        int64_t world_size, int64_t batch_size) {
  const std::string where = "checkpoint " + path + ": ";
  const auto ranks = [](int64_t n) { return std::to_string(n) + (n == 1 ? " rank" : " ranks"); };
  if (s.world_size <= 0) {
    throw std::invalid_argument(where +
                                "records no data position (written before Colony recorded it, or by a program that "
                                "does not), so where epoch " + std::to_string(s.epoch) + "'s data stopped is unknown");
  }
  if (s.data_seed != data_seed) {
    throw std::invalid_argument(where + "its data order was drawn with seed " + std::to_string(s.data_seed) +
                                ", this run's with seed " + std::to_string(data_seed) +
                                ": resume with the seed it was written with");
  }
  if (s.epoch_samples != 0 && s.epoch_samples >= epoch_size) {
    throw std::invalid_argument(where + "position " + std::to_string(s.epoch_samples) + " in epoch " +
                                std::to_string(s.epoch) + " lies beyond the epoch's " + std::to_string(epoch_size) +
                                " samples");
  }
  // Every optimizer step takes at least one sample, so an epoch holds at most epoch_size steps
  // and the one under way at most epoch_samples (whatever batch sizes the runs that took them had).
  const __int128 most_steps = static_cast<__int128>(s.epoch) * epoch_size + s.epoch_samples;
  if (static_cast<__int128>(s.step) > most_steps) {
    throw std::invalid_argument(where + "step " + std::to_string(s.step) + " is more than " + std::to_string(s.epoch) +
                                " whole epochs of " + std::to_string(epoch_size) + " samples and " +
                                std::to_string(s.epoch_samples) + " samples of the next can hold");
  }
  if (s.epoch_samples % world_size != 0) {
    throw std::invalid_argument(
        where + "written by " + ranks(s.world_size) + " with batch size " + std::to_string(s.batch_size) +
        " after " + std::to_string(s.epoch_samples) + " samples of epoch " + std::to_string(s.epoch) + "; this run has " +
        ranks(world_size) + " with batch size " + std::to_string(batch_size) + ", which cannot share the rest of the epoch evenly (" +
        std::to_string(s.epoch_samples) + " is not a multiple of " + std::to_string(world_size) +
        "): resume with a world size that divides it, or from a checkpoint written at the end of an epoch");
  }
  return s.epoch_samples;
}

}  // namespace colony::optim
