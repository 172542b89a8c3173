#include "data/token_blocks.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tensor/random.h"
#include "ops/raw_ops.h"

namespace colony::data {
namespace {

constexpr const char* kWho = "TokenBlocks";
// Philox blocks between the draws of consecutive batches: far more than one batch uses.
constexpr uint64_t kBlocksPerBatch = uint64_t{1} << 32;

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v, &end, 10);
  if (errno != 0 || *end != '\0') {
    throw std::invalid_argument(std::string(kWho) + ": environment variable " + name + "='" + v +
                                "' is not an integer");
  }
  return x;
}

}  // namespace

TokenBlocks::TokenBlocks(const Tensor& tokens, int64_t block_size, const TokenBlocksOptions& options)
    : block_size_(block_size),
      rank_(options.rank() ? *options.rank() : env_int("RANK", 0)),
      world_(options.world_size() ? *options.world_size() : env_int("WORLD_SIZE", 1)),
      seed_(options.seed()) {
  if (!tokens.defined() || tokens.dim() != 1 || is_floating(tokens.dtype()) || tokens.dtype() == kBool) {
    throw std::invalid_argument(
        std::string(kWho) + ": expected a 1-D integral tensor of tokens, got " +
        (tokens.defined() ? std::string(dtype_name(tokens.dtype())) + " with " + std::to_string(tokens.dim()) + " dims"
                          : std::string("an undefined tensor")));
  }
  if (block_size < 1) {
    throw std::invalid_argument(std::string(kWho) + ": block_size must be >= 1, got " + std::to_string(block_size));
  }
  if (tokens.numel() < block_size + 1) {
    throw std::invalid_argument(std::string(kWho) + ": " + std::to_string(tokens.numel()) +
                                " tokens are too few for block_size " + std::to_string(block_size) +
                                ": a block and its target (shifted by one) need at least " +
                                std::to_string(block_size + 1));
  }
  if (world_ < 1 || rank_ < 0 || rank_ >= world_) {
    throw std::invalid_argument(std::string(kWho) + ": rank " + std::to_string(rank_) + " is not in [0, " +
                                std::to_string(world_) + ") (world_size " + std::to_string(world_) + ")");
  }
  tokens_ = raw::contiguous(raw::to(tokens, kCPU, kInt64));
}

void TokenBlocks::set_batches_drawn(int64_t k) {
  if (k < 0) throw std::invalid_argument(std::string(kWho) + ": batches drawn must be >= 0, got " + std::to_string(k));
  batches_ = k;
}

TokenBatch TokenBlocks::next_batch(int64_t batch_size) {
  if (batch_size < 1) {
    throw std::invalid_argument(std::string(kWho) + "::next_batch: batch_size must be >= 1, got " +
                                std::to_string(batch_size));
  }
  // The whole job's offsets of batch k, from a counter that depends on k only; this rank's share.
  Generator gen(seed_);
  gen.set_state(seed_, static_cast<uint64_t>(batches_) * kBlocksPerBatch);
  const int64_t offsets = tokens_.numel() - block_size_;  // nanoGPT: randint(len(data) - block_size)
  Tensor all = raw::randint(0, offsets, {world_ * batch_size}, TensorOptions(kInt64), &gen);
  const int64_t* start = all.data_ptr<int64_t>() + rank_ * batch_size;
  ++batches_;

  TokenBatch b{raw::empty({batch_size, block_size_}, TensorOptions(kInt64)),
               raw::empty({batch_size, block_size_}, TensorOptions(kInt64))};
  const int64_t* src = tokens_.data_ptr<int64_t>();
  int64_t* x = b.x.data_ptr<int64_t>();
  int64_t* y = b.y.data_ptr<int64_t>();
  const size_t row = static_cast<size_t>(block_size_) * sizeof(int64_t);
  for (int64_t i = 0; i < batch_size; ++i) {
    std::memcpy(x + i * block_size_, src + start[i], row);
    std::memcpy(y + i * block_size_, src + start[i] + 1, row);
  }
  return b;
}

}  // namespace colony::data
