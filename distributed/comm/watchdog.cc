#include "distributed/comm/watchdog.h"

#include <unistd.h>

#include <cstdio>
#include <vector>

namespace colony::dist {

std::string abort_key() { return "colony/abort"; }
std::string heartbeat_key(int generation, int rank) {
  return "colony/gen" + std::to_string(generation) + "/heartbeat/" + std::to_string(rank);
}
std::string left_key(int generation, int rank) {
  return "colony/gen" + std::to_string(generation) + "/left/" + std::to_string(rank);
}

std::string progress_key(int generation, int rank) {
  return "colony/gen" + std::to_string(generation) + "/progress/" + std::to_string(rank);
}

Watchdog::Watchdog(std::shared_ptr<Store> store, std::shared_ptr<ProcessGroup> group, int rank, int world_size,
                   int generation, WatchdogOptions options)
    : store_(std::move(store)),
      group_(std::move(group)),
      rank_(rank),
      world_size_(world_size),
      generation_(generation),
      options_(std::move(options)) {
  thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() { stop(); }

void Watchdog::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

std::string Watchdog::abort_message() const {
  std::lock_guard<std::mutex> lock(mu_);
  return abort_message_;
}

std::string Watchdog::failure_cause() {
  std::string mine = abort_message();
  if (!mine.empty()) return mine;
  try {
    if (store_->check({abort_key()})) return store_->get_string(abort_key());
  } catch (const std::exception&) {
  }
  return "";
}

FailureMonitor::Stall Watchdog::stalled_ranks() {
  const uint64_t mine = group_->collectives_started();
  Stall stall;
  std::string counts;
  try {
    for (int r = 0; r < world_size_; ++r) {
      const std::string key = progress_key(generation_, r);
      if (r == rank_ || !store_->check({key}) || store_->check({left_key(generation_, r)})) continue;
      const uint64_t theirs = std::stoull(store_->get_string(key));
      if (theirs >= mine) continue;
      stall.ranks.push_back(r);
      counts += (counts.empty() ? "" : ", ") + std::to_string(theirs);
    }
  } catch (const std::exception&) {
    return {};  // the store is gone or a count unreadable: nothing to say
  }
  if (stall.ranks.empty()) return stall;
  const bool one = stall.ranks.size() == 1;
  stall.description = stalled_phrase(stall.ranks) + ": " + (one ? "it has" : "they have") + " started " + counts +
                      " collectives, rank " + std::to_string(rank_) + " " + std::to_string(mine) + " (" +
                      (one ? "it is" : "they are") + " held up outside the collectives: in I/O, a lock, a loop, a debugger?)";
  return stall;
}

void Watchdog::report_failure(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (abort_message_.empty()) abort_message_ = message;
  }
  try {
    // compare_set with an empty expectation: only the first failure is recorded.
    const std::string m = message;
    store_->compare_set(abort_key(), {}, Bytes(m.begin(), m.end()));
  } catch (const std::exception&) {
    // The store is gone too; the others notice that on their own.
  }
  group_->abort(message);
}

void Watchdog::mark_left() {
  left_ = true;
  try {
    store_->set(left_key(generation_, rank_), std::string("1"));
  } catch (const std::exception&) {
  }
}

void Watchdog::trigger(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!abort_message_.empty()) return;  // this rank failed first, or already triggered
    abort_message_ = message;
  }
  std::fprintf(stderr, "[rank %d] colony: stopping this rank: %s\n", rank_, message.c_str());
  std::fflush(stderr);
  group_->abort(message);
  // Collectives now throw; give the program `grace` to end by itself (its catch blocks,
  // destroy_process_group), then end it: a rank must never wait out a timeout for a dead job.
  std::unique_lock<std::mutex> lock(mu_);
  if (cv_.wait_for(lock, options_.grace, [this] { return stopping_.load(); })) return;
  std::fprintf(stderr, "[rank %d] colony: exiting because %s\n", rank_, message.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(1);
}

void Watchdog::run() {
  using Clock = std::chrono::steady_clock;
  struct Peer {
    int64_t beats = 0;
    Clock::time_point changed = Clock::now();
    bool seen = false;
    bool left = false;
  };
  std::vector<Peer> peers(world_size_);
  uint64_t posted_progress = ~uint64_t{0};  // none yet
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (cv_.wait_for(lock, options_.interval, [this] { return stopping_.load(); })) return;
      if (!abort_message_.empty()) return;  // this rank reported its own failure
    }
    std::string problem;
    try {
      store_->add(heartbeat_key(generation_, rank_), 1);
      const uint64_t started = group_->collectives_started();
      if (started != posted_progress) {
        store_->set(progress_key(generation_, rank_), std::to_string(started));
        posted_progress = started;
      }
      if (store_->check({abort_key()})) {
        problem = store_->get_string(abort_key());
      } else {
        const auto now = Clock::now();
        for (int r = 0; r < world_size_ && problem.empty(); ++r) {
          if (r == rank_ || peers[r].left) continue;
          const int64_t beats = store_->add(heartbeat_key(generation_, r), 0);
          Peer& p = peers[r];
          if (beats != p.beats) {
            p.beats = beats;
            p.changed = now;
            p.seen = beats > 0;
            continue;
          }
          if (!p.seen || now - p.changed < options_.heartbeat_timeout) continue;
          if (store_->check({left_key(generation_, r)})) {
            p.left = true;
            continue;
          }
          problem = "rank " + std::to_string(r) + " stopped responding (no heartbeat for " +
                    std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now - p.changed).count()) +
                    " ms, seen by rank " + std::to_string(rank_) + "): it was probably killed or hung";
          // The silent rank cannot say so itself: post it as the job's failure (first writer
          // wins), or this rank's own exit would be reported as the cause.
          const Bytes first = store_->compare_set(abort_key(), {}, Bytes(problem.begin(), problem.end()));
          if (!first.empty()) problem.assign(first.begin(), first.end());
        }
      }
    } catch (const std::exception& e) {
      if (stopping_ || left_) return;
      problem = "lost the job's store at " + options_.store_description + " (" + e.what() +
                "): the process hosting it probably failed";
    }
    if (!problem.empty()) {
      trigger(problem);
      return;
    }
  }
}

}  // namespace colony::dist
