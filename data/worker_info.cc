#include "data/worker_info.h"

namespace colony::data {
namespace {
thread_local const WorkerInfo* current_worker_info = nullptr;
}  // namespace

const WorkerInfo* get_worker_info() { return current_worker_info; }

namespace detail {
WorkerInfoScope::WorkerInfoScope(const WorkerInfo& info) : previous_(current_worker_info) {
  current_worker_info = &info;
}
WorkerInfoScope::~WorkerInfoScope() { current_worker_info = previous_; }
}  // namespace detail

}  // namespace colony::data
