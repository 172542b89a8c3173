// Which backend init_process_group builds, decided once for the whole job. NCCL needs a GPU of its
// own for every rank, and no process can tell that alone: one that sees a single GPU while its
// machine runs eight ranks may have been given its own (CUDA_VISIBLE_DEVICES per rank, Slurm's
// --gpus-per-task=1, a container per rank) or may share the machine's only GPU with the others.
// So every rank offers what it would use (its GPU's UUID, or why it has none) through the job's
// store, and rank 0 decides from all the offers; the other ranks read its decision. Plain C++, so
// the decision is tested without a GPU (tests/distributed/init_test.cc).
#pragma once

#include <string>
#include <vector>

namespace colony::dist::init_detail {

// The GPU a rank uses among those its process sees: cuda:(LOCAL_RANK % GPUs). A process given its
// own GPU by the launcher sees one, so that is cuda:0 whatever its LOCAL_RANK.
int local_gpu(int local_rank, int gpus);

// What one rank brings to the decision.
struct BackendOffer {
  std::string requested;  // InitOptions::backend: "auto", "nccl" or "gloo"
  std::string gpu;        // the UUID of the GPU it would use ("GPU-6f1c..."); empty: it has none
  std::string missing;    // why it cannot run NCCL, when `gpu` is empty
};

// As stored under the rank's key, and back.
std::string encode(const BackendOffer& offer);
BackendOffer decode_offer(const std::string& text);

struct BackendChoice {
  std::string backend;  // "nccl" or "gloo"
  std::string why;      // why not NCCL, when "auto" chose Gloo; empty otherwise
};

// The backend of the job from every rank's offer (one per rank, in rank order). "auto" is NCCL
// when every rank has a GPU and no two share one, else Gloo; "gloo" is Gloo. Throws
// std::invalid_argument, naming the ranks, when "nccl" is asked for and cannot run, and when the
// ranks did not all ask for the same backend.
BackendChoice choose_backend(const std::vector<BackendOffer>& offers);

}  // namespace colony::dist::init_detail
