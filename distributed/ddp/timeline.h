// When DDP's gradient all-reduces ran, and how much of that was hidden behind backward: the
// reducer's stats and its spans in the Chrome trace (log/trace.h).
//
// A collective the host runs (Gloo) reports its own times (Work::started_at/finished_at). One that
// runs on a GPU stream (NCCL) does not: asking the GPU would block the host until it got there, a
// host sync per bucket, which DDP on a GPU must never do. So the reducer records events instead
// (DeviceTimeline): on the compute stream when backward starts, when each bucket's all-reduce is
// queued and when backward's computation ends; on the communication stream after each all-reduce.
// They are read once they have completed (Event::query, which never blocks): at a later
// iteration's end, when stats are asked for, or when the reducer goes away (which waits for them
// only when a trace is being written). On a GPU the stats and the trace's GPU lanes therefore
// trail the host by an iteration or two. At most kMaxQueued iterations wait to be read; past that
// the oldest is waited for, which costs nothing unless the GPU is that many iterations behind.
//
// The communication stream runs its group's collectives in order, so a bucket's all-reduce starts
// when its gradients are ready on the compute stream or when the previous one ended, whichever is
// later. GPU times are placed on the host's clock from the host time at which backward started:
// the GPU lanes are exact relative to each other and lag the host lanes by however far the GPU
// runs behind the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "log/trace.h"
#include "runtime/stream.h"

namespace colony::dist {

struct ReducerStats {
  int64_t iterations = 0;
  // Total time buckets spent in all-reduce, and how much of it ran while backward was still
  // computing (the overlap DDP exists for).
  double comm_seconds = 0;
  double hidden_seconds = 0;
  // The first bucket of the last iteration, relative to the end of backward's computation
  // (negative: during backward). Launch: when the reducer handed its all-reduce to the process
  // group, which the reducer decides. Start: when the collective began running, which also
  // depends on when the OS schedules Gloo's thread (or on the GPU's streams): on a loaded machine
  // it can begin only after backward, however early it was launched.
  double last_first_bucket_launch_minus_backward_end = 0;
  double last_first_bucket_start_minus_backward_end = 0;
};

// One iteration's backward and bucket all-reduces, on one clock.
struct IterationSpans {
  struct Span {
    size_t bucket = 0;  // launch order: 0 is the first
    std::string name;
    trace::Clock::time_point begin, end;
  };
  trace::Clock::time_point backward_begin, backward_end;
  std::vector<Span> buckets;
};

// Adds `it` to `stats` and its bucket spans to the trace: on the host's lanes, or (on_device) on
// the GPU's lanes with backward's computation beside them.
void account(const IterationSpans& it, bool on_device, ReducerStats& stats);

class DeviceTimeline {
 public:
  static constexpr size_t kMaxQueued = 8;

  DeviceTimeline();
  ~DeviceTimeline();
  DeviceTimeline(const DeviceTimeline&) = delete;
  DeviceTimeline& operator=(const DeviceTimeline&) = delete;

  // Backward starts; `compute` is the stream it runs on (a CUDA stream).
  void begin(const Stream& compute);
  bool began() const { return current_ != nullptr; }
  // Bucket `index`'s all-reduce was just queued on `comm`, after what `compute` holds so far.
  void bucket_queued(size_t index, std::string name, const Stream& compute, const Stream& comm);
  // Backward's computation has been queued: the iteration waits to be read.
  void end(const Stream& compute, const std::function<void(const IterationSpans&)>& sink);
  // Forgets an iteration that began but will not end (its backward failed).
  void drop_current();
  // Passes every waiting iteration whose events completed to `sink`, oldest first; with `block`,
  // waits for all of them.
  void collect(bool block, const std::function<void(const IterationSpans&)>& sink);

 private:
  struct Iteration;
  std::unique_ptr<Iteration> current_;
  std::deque<std::unique_ptr<Iteration>> queued_;
};

}  // namespace colony::dist
