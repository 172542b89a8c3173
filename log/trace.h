// A built-in timeline. With COLONY_TRACE=path, each process records spans (forward, backward,
// every DDP bucket's all-reduce, the optimizer step) and writes them as a Chrome trace
// (chrome://tracing or https://ui.perfetto.dev) at exit or on flush(), so one can see whether
// communication overlaps backward.
//
// The path may contain "{rank}"; otherwise, when RANK is set, ".rank<R>" goes before the
// extension (trace.json -> trace.rank1.json) so the ranks of one job do not overwrite each other.
// With COLONY_TRACE unset, Scope and complete() cost one branch.
#pragma once

#include <chrono>
#include <string>

namespace colony::trace {

using Clock = std::chrono::steady_clock;

// Lanes of the timeline (Chrome's "threads"): what the host threads did, and what a GPU's compute
// and communication streams did (DDP records those with events, see distributed/ddp/timeline.h).
enum class Lane { kCompute = 0, kCommunication = 1, kComputeStream = 2, kCommunicationStream = 3 };

bool enabled();
// Starts recording to `path` (as if COLONY_TRACE=path) — tests and programs that want a trace
// without the environment variable.
void start(const std::string& path);
// Records a finished span.
void complete(const std::string& name, const char* category, Clock::time_point begin, Clock::time_point end,
              Lane lane = Lane::kCompute);
// Writes what was recorded so far (atomically: temp file, then rename). Returns the path written,
// or "" when tracing is off.
std::string flush();

// Records the span from construction to destruction.
class Scope {
 public:
  Scope(const char* name, const char* category) : name_(name), category_(category) {
    if (enabled()) begin_ = Clock::now();
  }
  ~Scope() {
    if (begin_ != Clock::time_point{}) complete(name_, category_, begin_, Clock::now());
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* name_;
  const char* category_;
  Clock::time_point begin_{};
};

}  // namespace colony::trace
