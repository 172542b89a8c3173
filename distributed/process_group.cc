#include "distributed/process_group.h"

namespace colony::dist {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kAvg: return "avg";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

std::string unreachable_phrase(const std::vector<int>& ranks) {
  std::string who;
  for (size_t i = 0; i < ranks.size(); ++i) who += (i ? ", " : "") + std::to_string(ranks[i]);
  return (ranks.size() == 1 ? "rank " : "ranks ") + who + (ranks.size() == 1 ? " is" : " are") + " unreachable";
}

}  // namespace colony::dist
