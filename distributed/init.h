// The default process group, set up from the launcher's environment, and the job-wide helpers a
// training program calls (the user's program in docs/ARCHITECTURE.md).
//
// init_process_group() reads rank and world size from the options or the environment:
//   torchrun / colonyrun: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//   mpirun (Open MPI):    OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
//   srun (Slurm):         SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE
// and then exports what it found as RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (and
// MASTER_ADDR, MASTER_PORT with the store's port), so whatever reads those by itself
// (DistributedSampler's defaults, trace file names) agrees with the group under any launcher.
// With one process nothing is created and every collective is the identity, so the same program
// runs on one CPU or GPU. With several, rank 0 hosts the TCP store at MASTER_ADDR:MASTER_PORT
// (unless colonyrun already hosts it: COLONY_STORE_HOSTED=1) and the ranks build a Gloo group, plus an
// NCCL group for CUDA tensors when every rank has a GPU of its own (InitOptions::backend).
//
// Failure is fast (comm/watchdog.h): a rank that throws, exits without finishing, or is killed makes
// every other rank fail within seconds with an error naming it, instead of hanging.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "distributed/comm/process_group.h"
#include "distributed/store/store.h"
#include "runtime/device.h"
#include "tensor/tensor.h"

namespace colony::dist {

struct InitOptions {
  // "auto": NCCL for CUDA tensors (Gloo for host ones) when every rank has a GPU of its own and the
  // build has CUDA, else Gloo for all (CUDA tensors through pinned host memory, so ranks may share
  // a GPU); "nccl" or "gloo" force either ("nccl" fails, naming the ranks, when two share a GPU).
  // The ranks decide together, by the UUIDs of the GPUs they use (distributed/backend_choice.h): a
  // process that sees a single GPU, given to it by CUDA_VISIBLE_DEVICES or Slurm's
  // --gpus-per-task=1, uses it (cuda:0) and counts as having its own.
  std::string backend = "auto";
  int rank = -1;                 // -1: from the environment (default 0)
  int world_size = -1;           // -1: from the environment (default 1)
  std::string master_addr;       // "": MASTER_ADDR
  int master_port = -1;          // -1: MASTER_PORT
  // Collectives' default timeout, and how long rendezvous may take.
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
};

void init_process_group(const InitOptions& options = {});
// Leaves the job in order (the others learn this rank finished, not failed). Called from inside a
// catch block, it tells the other ranks that this one failed, with the exception's message.
void destroy_process_group();
bool is_initialized();
// 0 and 1 before init_process_group(), like a single process.
int get_rank();
int get_world_size();
int get_local_rank();
int get_local_world_size();
bool is_main_process();
// How many times colonyrun --max_restarts has restarted this job's workers (COLONY_RESTART_COUNT;
// 0 on the first run and without a launcher). A restarted program resumes from its checkpoint.
int restart_count();
// cuda:LOCAL_RANK when CUDA devices exist (modulo their count: cuda:0 in a process that sees one),
// else cpu. init_process_group makes it the current device before anything creates a CUDA context.
Device local_device();
// The device a rank trains on, from a program's --device flag: "auto" is local_device(); "cuda"
// (no index) is this rank's GPU, cuda:(LOCAL_RANK % GPUs), so that the ranks of a machine each get
// their own instead of all landing on cuda:0; "cpu" and "cuda:N" are taken as given. "cuda" on a
// machine without a GPU is std::invalid_argument saying so.
Device device_for_rank(const std::string& spec);
// The same for a given local rank and GPU count (what the one above passes).
Device device_for_rank(const std::string& spec, int local_rank, int gpus);

// The default group; null for one process or before init_process_group().
std::shared_ptr<ProcessGroup> default_process_group();
// The job's store (null for one process).
std::shared_ptr<Store> default_store();

// Waits for `work`; when it failed because the job is going down, the error also says why (the
// failed rank's own message from the job's abort flag), e.g. "allreduce #11 failed: rank 1 is
// unreachable (...); the job is stopping because rank 1 failed: data file vanished".
void wait_and_explain(const std::shared_ptr<Work>& work);

// Blocking collectives on the default group (identity for one process).
void barrier();
void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::kSum);
void broadcast(Tensor& tensor, int root = 0);
// A scalar reduced over all ranks, e.g. the mean loss for logging.
double all_reduce(double value, ReduceOp op = ReduceOp::kAvg);

}  // namespace colony::dist
