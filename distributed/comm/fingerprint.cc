#include "distributed/comm/fingerprint.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "distributed/comm/process_group.h"
#include "tensor/dtype.h"

namespace colony::dist::comm_detail {

const char* op_name(int32_t kind) {
  switch (static_cast<OpKind>(kind)) {
    case OpKind::kAllreduce: return "allreduce";
    case OpKind::kBroadcast: return "broadcast";
    case OpKind::kAllgather: return "allgather";
    case OpKind::kReduceScatter: return "reduce_scatter";
    case OpKind::kBarrier: return "barrier";
  }
  return "unknown collective";
}

bool same_call(const Fingerprint& a, const Fingerprint& b) {
  return a.magic == b.magic && a.kind == b.kind && a.seq == b.seq && a.numel == b.numel && a.dtype == b.dtype &&
         a.root == b.root && a.reduce_op == b.reduce_op && a.layout == b.layout;
}

uint32_t tensor_layout(const std::vector<int64_t>& numels) {
  uint32_t hash = 2166136261u;  // FNV-1a over the counts' bytes
  for (int64_t n : numels)
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= static_cast<uint32_t>((static_cast<uint64_t>(n) >> (8 * byte)) & 0xFF);
      hash *= 16777619u;
    }
  const uint32_t count = static_cast<uint32_t>(std::min<size_t>(std::max<size_t>(numels.size(), 1), 255));
  return (hash & 0xFFFFFF00u) | count;
}

namespace {

// call_signature(), where `with_sizes` says whether to show the hash of a multi-tensor call's sizes:
// a mismatch needs it (the counts may all agree), a Work's description does not.
std::string signature(const Fingerprint& f, bool with_sizes) {
  if (f.magic != Fingerprint::kMagic) return "something unreadable (a different Colony build?)";
  const auto kind = static_cast<OpKind>(f.kind);
  std::string s = op_name(f.kind);
  if (kind == OpKind::kBarrier) return s + "()";
  s += "(";
  s += (f.dtype >= 0 && f.dtype < kNumDTypes) ? dtype_name(static_cast<DType>(f.dtype)) : "unknown dtype";
  s += ", " + std::to_string(f.numel) + (f.numel == 1 ? " element" : " elements");
  if (kind == OpKind::kAllgather || kind == OpKind::kReduceScatter) s += " per rank";
  if (f.layout != 0) {
    char sizes[8];
    std::snprintf(sizes, sizeof sizes, "%06x", static_cast<unsigned>(f.layout >> 8));
    const uint32_t count = f.layout & 0xFF;
    s += " as " + std::to_string(count) + (count == 255 ? "+" : "") + (count == 1 ? " tensor" : " tensors");
    if (with_sizes) s += std::string(" of sizes #") + sizes;
  }
  if (kind == OpKind::kBroadcast) s += ", root " + std::to_string(f.root);
  if (f.reduce_op >= 0) s += std::string(", ") + reduce_op_name(static_cast<ReduceOp>(f.reduce_op));
  return s + ")";
}

}  // namespace

std::string call_signature(const Fingerprint& f) { return signature(f, /*with_sizes=*/true); }

std::string work_name(const Fingerprint& f) { return std::string(op_name(f.kind)) + " #" + std::to_string(f.seq); }

std::string work_description(const Fingerprint& f) {
  if (static_cast<OpKind>(f.kind) == OpKind::kBarrier) return work_name(f);
  // "allreduce(float32, ...)" -> "allreduce #12 (float32, ...)"
  const std::string sig = signature(f, /*with_sizes=*/false);
  return work_name(f) + " " + sig.substr(sig.find('('));
}

std::string describe_mismatch(const std::vector<Fingerprint>& all, int my_rank) {
  if (std::all_of(all.begin(), all.end(), [&](const Fingerprint& f) { return same_call(f, all[0]); })) return "";
  const uint64_t seq = all[my_rank].seq;
  // Distinct calls in order of the lowest rank that made them, each with the ranks that made it.
  std::vector<std::pair<std::string, std::vector<int>>> calls;
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    std::string sig = call_signature(all[r]);
    if (all[r].magic == Fingerprint::kMagic && all[r].seq != seq) sig += " as #" + std::to_string(all[r].seq);
    auto it = std::find_if(calls.begin(), calls.end(), [&](const auto& c) { return c.first == sig; });
    if (it == calls.end()) calls.push_back({sig, {r}});
    else it->second.push_back(r);
  }
  std::string msg = "collective mismatch at #" + std::to_string(seq) + ": ";
  for (size_t c = 0; c < calls.size(); ++c) {
    const auto& ranks = calls[c].second;
    msg += c ? ", " : "";
    msg += ranks.size() == 1 ? "rank " : "ranks ";
    for (size_t i = 0; i < ranks.size(); ++i) msg += (i ? ", " : "") + std::to_string(ranks[i]);
    msg += " called " + calls[c].first;
  }
  const bool several = std::any_of(all.begin(), all.end(), [](const Fingerprint& f) { return f.layout != 0; });
  return msg + " (every rank must call the same collectives, in the same order, on tensors of the same "
               "dtype and element count" +
         (several ? std::string("; several tensors at once must have the same sizes, in the same order, on every rank")
                  : std::string()) +
         ")";
}

}  // namespace colony::dist::comm_detail
