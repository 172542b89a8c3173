// Training checkpoints: one safetensors file holding the model weights ("model.<name>"), the
// optimizer state ("optim.<name>") and, in the metadata, the progress counters and the RNG state,
// so that a resumed run continues exactly where the interrupted one stopped. With a GradScaler its
// state goes in too ("amp.<key>"). Written atomically.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "nn/module.h"
#include "optim/grad_scaler.h"
#include "optim/optimizer.h"
#include "tensor/random.h"

namespace colony::optim {

struct TrainingState {
  int64_t epoch = 0;       // epochs completed
  int64_t step = 0;        // optimizer steps taken in total
  uint64_t rng_seed = 0;   // the default generator's (seed, offset)
  uint64_t rng_offset = 0;
  std::map<std::string, std::string> extra;  // anything else the program wants back (sampler seed, ...)
};

// Captures the default generator's state into `state` and writes the file.
void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer& optimizer, TrainingState state,
                     const GradScaler* scaler = nullptr);
// Restores model, optimizer, the default generator and (when given and enabled) the scaler, which
// the file must then hold; returns the counters. Errors name the file.
TrainingState load_checkpoint(const std::string& path, nn::Module& model, Optimizer& optimizer,
                              GradScaler* scaler = nullptr);

}  // namespace colony::optim
