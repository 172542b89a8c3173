// What every rank must agree on before a collective runs, and the words for a disagreement.
// Internal to the backends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace colony::dist::comm_detail {

enum class OpKind : int32_t { kAllreduce = 1, kBroadcast = 2, kAllgather = 3, kReduceScatter = 4, kBarrier = 5 };

// "allreduce", ..., "unknown collective" for a value no build of ours sends.
const char* op_name(int32_t kind);

// Exchanged between ranks as raw bytes, so only fixed-width fields. `magic` catches a peer running
// a build with another layout instead of misreading it.
struct Fingerprint {
  static constexpr uint32_t kMagic = 0xC0107001;
  uint32_t magic = kMagic;
  int32_t kind = 0;        // OpKind
  uint64_t seq = 0;        // 1 for a group's first collective
  int64_t numel = 0;       // per rank for allgather / reduce_scatter
  int32_t dtype = -1;      // colony::DType; -1: no tensor (barrier)
  int32_t root = -1;       // broadcast only
  int32_t reduce_op = -1;  // ReduceOp; allreduce / reduce_scatter only
  // A call on several tensors at once (NCCL's allreduce_coalesced): tensor_layout() of their element
  // counts, so that ranks splitting the same total differently disagree. 0: one tensor.
  uint32_t layout = 0;
};
static_assert(sizeof(Fingerprint) == 40, "Fingerprint is exchanged as 40 raw bytes");

bool same_call(const Fingerprint& a, const Fingerprint& b);

// Fingerprint::layout for tensors of these element counts, in order: the count (up to 255) in the
// low byte, a 24-bit hash of the list above it. Never 0.
uint32_t tensor_layout(const std::vector<int64_t>& numels);

// What a Work is called in messages: "allreduce #12", and with its call,
// "allreduce #12 (float32, 1000 elements, sum)" ("barrier #3" for a barrier; several tensors:
// "allreduce #4 (float32, 150 elements as 2 tensors, sum)").
std::string work_name(const Fingerprint& f);
std::string work_description(const Fingerprint& f);

// "allreduce(float32, 1000 elements, sum)", "broadcast(float32, 1000 elements, root 0)",
// "allgather(int64, 8 elements per rank)", "barrier()"; several tensors:
// "allreduce(float32, 150 elements as 2 tensors of sizes #5e0c1a, sum)".
std::string call_signature(const Fingerprint& f);

// "collective mismatch at #7: rank 0 called allreduce(float32, 1000 elements, sum), rank 1 called
// broadcast(float32, 1000 elements, root 0) (...)"; ranks that agree are listed together
// ("ranks 0, 1 called ..."). Empty when every rank called the same thing.
std::string describe_mismatch(const std::vector<Fingerprint>& all, int my_rank);

}  // namespace colony::dist::comm_detail
