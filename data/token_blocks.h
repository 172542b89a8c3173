// Random blocks of a token stream for language-model training, as nanoGPT's get_batch: each row of
// a batch is block_size consecutive tokens from a random offset, and its target the same block one
// token later.
//
// Under DDP every rank draws its own blocks the way DistributedSampler shards an epoch: batch k of
// the whole job is world_size * batch_size offsets drawn from a generator seeded with `seed` at a
// position fixed by k alone (Philox counter k * 2^32), and rank r takes offsets
// [r * batch_size, (r + 1) * batch_size). So a rank's stream is reproducible from (seed, rank,
// world_size, k), the ranks never share a draw, and the job's blocks do not depend on how they
// are split: one rank with batch 32 sees the blocks that 4 ranks with batch 8 see together.
// Resuming is set_batches_drawn(k).
#pragma once

#include <cstdint>
#include <optional>

#include "tensor/tensor.h"

namespace colony::data {

struct TokenBlocksOptions {
  // Unset: from the environment, WORLD_SIZE (default 1) and RANK (default 0), as DistributedSampler.
  TokenBlocksOptions& world_size(int64_t n) {
    world_size_ = n;
    return *this;
  }
  TokenBlocksOptions& rank(int64_t r) {
    rank_ = r;
    return *this;
  }
  TokenBlocksOptions& seed(uint64_t s) {
    seed_ = s;
    return *this;
  }
  const std::optional<int64_t>& world_size() const { return world_size_; }
  const std::optional<int64_t>& rank() const { return rank_; }
  uint64_t seed() const { return seed_; }

 private:
  std::optional<int64_t> world_size_;
  std::optional<int64_t> rank_;
  uint64_t seed_ = 0;
};

// x: the inputs, y: the targets (x shifted by one token), both int64 [batch_size, block_size].
struct TokenBatch {
  Tensor x;
  Tensor y;
};

class TokenBlocks {
 public:
  // `tokens`: a 1-D integral tensor (converted to int64 on the CPU once) of at least
  // block_size + 1 tokens, so that one block and its target fit.
  TokenBlocks(const Tensor& tokens, int64_t block_size, const TokenBlocksOptions& options = {});

  // This rank's next batch, on the CPU (move it with .to(device)).
  TokenBatch next_batch(int64_t batch_size);

  int64_t block_size() const { return block_size_; }
  int64_t num_tokens() const { return tokens_.numel(); }
  int64_t rank() const { return rank_; }
  int64_t world_size() const { return world_; }
  uint64_t seed() const { return seed_; }
  // Batches drawn so far (by every rank alike): what a checkpoint keeps, and set_batches_drawn
  // restores, so that the resumed stream continues where it stopped.
  int64_t batches_drawn() const { return batches_; }
  void set_batches_drawn(int64_t k);

 private:
  Tensor tokens_;  // int64, contiguous, CPU
  int64_t block_size_;
  int64_t rank_;
  int64_t world_;
  uint64_t seed_;
  int64_t batches_ = 0;
};

}  // namespace colony::data
