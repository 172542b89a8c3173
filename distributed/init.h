// Process-group set-up from the launcher's environment (torchrun's variables: RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR, MASTER_PORT).
//
// This stage supports one process: init_process_group() accepts WORLD_SIZE unset or 1 and refuses
// larger worlds with an error that says so, so a program written for DDP (the user's program in
// DESIGN.md) runs unchanged on one CPU or GPU. The TCP store, the Gloo/NCCL collectives and the
// colonyrun launcher extend this same API.
#pragma once

#include <chrono>
#include <string>

#include "tensor/device.h"

namespace colony::dist {

struct InitOptions {
  std::string backend = "auto";  // "auto", "gloo" or "nccl"
  int rank = -1;                 // -1: from RANK (default 0)
  int world_size = -1;           // -1: from WORLD_SIZE (default 1)
  std::chrono::seconds timeout{600};
};

void init_process_group(const InitOptions& options = {});
void destroy_process_group();
bool is_initialized();
// 0 and 1 before init_process_group(), like a single process.
int get_rank();
int get_world_size();
int get_local_rank();
bool is_main_process();
// cuda:LOCAL_RANK when CUDA devices exist, else cpu.
Device local_device();
// Waits for every rank (returns at once for one process).
void barrier();

}  // namespace colony::dist
