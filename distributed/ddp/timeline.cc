#include "distributed/ddp/timeline.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace colony::dist {
namespace {

double seconds(trace::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Overlap of [a0, a1] with [b0, b1], in seconds.
double overlap(trace::Clock::time_point a0, trace::Clock::time_point a1, trace::Clock::time_point b0,
               trace::Clock::time_point b1) {
  const auto lo = std::max(a0, b0);
  const auto hi = std::min(a1, b1);
  return hi > lo ? seconds(hi - lo) : 0.0;
}

}  // namespace

void account(const IterationSpans& it, bool on_device, ReducerStats& stats) {
  for (const auto& s : it.buckets) {
    stats.comm_seconds += seconds(s.end - s.begin);
    stats.hidden_seconds += overlap(s.begin, s.end, it.backward_begin, it.backward_end);
    if (s.bucket == 0) stats.last_first_bucket_start_minus_backward_end = seconds(s.begin - it.backward_end);
    trace::complete(s.name, "communication", s.begin, s.end,
                    on_device ? trace::Lane::kCommunicationStream : trace::Lane::kCommunication);
  }
  // The host's backward span is the reducer's own; the GPU's is only known here.
  if (on_device && !it.buckets.empty())
    trace::complete("backward", "compute", it.backward_begin, it.backward_end, trace::Lane::kComputeStream);
}

struct DeviceTimeline::Iteration {
  struct Bucket {
    size_t index;
    std::string name;
    Event ready;  // compute stream: its gradients are ready, its all-reduce may start
    Event done;   // communication stream: its all-reduce ended
  };
  trace::Clock::time_point host_begin;
  Event begin, end;
  std::vector<Bucket> buckets;

  bool completed() const { return end.query() && std::all_of(buckets.begin(), buckets.end(), [](const Bucket& b) {
                                    return b.done.query();
                                  }); }
  void synchronize() const {
    end.synchronize();
    for (const Bucket& b : buckets) b.done.synchronize();
  }
  IterationSpans spans() const {
    auto at = [&](const Event& e) {
      return host_begin + std::chrono::duration_cast<trace::Clock::duration>(
                              std::chrono::duration<double, std::milli>(begin.elapsed_ms(e)));
    };
    IterationSpans it;
    it.backward_begin = host_begin;
    it.backward_end = at(end);
    trace::Clock::time_point previous_end{};
    for (const Bucket& b : buckets) {
      IterationSpans::Span s;
      s.bucket = b.index;
      s.name = b.name;
      s.begin = std::max(at(b.ready), previous_end);  // the stream runs one collective at a time
      s.end = std::max(at(b.done), s.begin);
      previous_end = s.end;
      it.buckets.push_back(std::move(s));
    }
    return it;
  }
};

DeviceTimeline::DeviceTimeline() = default;
DeviceTimeline::~DeviceTimeline() = default;

void DeviceTimeline::begin(const Stream& compute) {
  current_ = std::make_unique<Iteration>();
  current_->host_begin = trace::Clock::now();
  current_->begin.record(compute);
}

void DeviceTimeline::drop_current() { current_.reset(); }

void DeviceTimeline::bucket_queued(size_t index, std::string name, const Stream& compute, const Stream& comm) {
  if (!current_) return;
  Iteration::Bucket b{index, std::move(name), Event(), Event()};
  b.ready.record(compute);
  b.done.record(comm);
  current_->buckets.push_back(std::move(b));
}

void DeviceTimeline::end(const Stream& compute, const std::function<void(const IterationSpans&)>& sink) {
  if (!current_) return;
  current_->end.record(compute);
  queued_.push_back(std::move(current_));
  while (queued_.size() > kMaxQueued) {
    queued_.front()->synchronize();
    sink(queued_.front()->spans());
    queued_.pop_front();
  }
}

void DeviceTimeline::collect(bool block, const std::function<void(const IterationSpans&)>& sink) {
  while (!queued_.empty()) {
    if (block) {
      queued_.front()->synchronize();
    } else if (!queued_.front()->completed()) {
      return;  // later iterations ran after it on the same streams
    }
    sink(queued_.front()->spans());
    queued_.pop_front();
  }
}

}  // namespace colony::dist
