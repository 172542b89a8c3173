// Training checkpoints: one safetensors file holding the model weights ("model.<name>"), the
// optimizer state ("optim.<name>") and, in the metadata, the progress counters and the RNG state,
// so that a resumed run continues exactly where the interrupted one stopped, also with another
// world size or batch size (the data stream's position is kept in samples). With a GradScaler its
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
  // Where the data stream stood, so that a run resumed with another world size or batch size
  // continues exactly there (resume_position()). Recorded when world_size > 0.
  int64_t epoch_samples = 0;  // samples of epoch `epoch` (the one under way) all ranks together had taken
  uint64_t data_seed = 0;     // the data order's seed (epoch e's order is drawn with data_seed + e)
  int64_t world_size = 0;     // ranks of the run that wrote it; 0: not recorded
  int64_t batch_size = 0;     // samples each rank took per optimizer step (batch size x accumulation)
  std::map<std::string, std::string> extra;  // anything else the program wants back
};

// Captures the default generator's state into `state` and writes the file.
void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer& optimizer, TrainingState state,
                     const GradScaler* scaler = nullptr);
// Restores model, optimizer, the default generator and (when given and enabled) the scaler, which
// the file must then hold; returns the counters. Errors name the file.
TrainingState load_checkpoint(const std::string& path, nn::Module& model, Optimizer& optimizer,
                              GradScaler* scaler = nullptr);

// Where a run of `world_size` ranks, each taking `batch_size` samples per optimizer step, resumes
// epoch `state.epoch` of a dataset of `epoch_size` samples whose order is seeded with `data_seed`:
// state.epoch_samples (DistributedSampler::set_start), once checked. Any world size and batch
// size continue the same stream, provided the ranks can share what is left evenly (the position
// is a multiple of world_size). std::invalid_argument naming `path` and what was wrong when the
// checkpoint records no position, the position or the step count lies beyond what the epochs
// hold, the data order's seed differs, or the ranks cannot share the rest (naming the world size
// and batch size of both runs).
int64_t resume_position(const TrainingState& state, const std::string& path, int64_t epoch_size, uint64_t data_seed,
                        int64_t world_size, int64_t batch_size);

}  // namespace colony::optim
