// Makes one rank's failure every rank's failure, within seconds, with the failed rank named.
//
// Each rank runs a watchdog thread with its own store connection. Every 200 ms it
//  - posts how many collectives its rank has started (progress_key), so that a collective that
//    times out can blame the ranks that never started it (alive, but blocked elsewhere: their
//    count lags) rather than its own rank (stalled_ranks());
//  - bumps its heartbeat counter and watches the other ranks' (one that stops for
//    heartbeat_timeout without having left in order is declared dead: killed or hung, e.g.
//    SIGSTOP; the watchdog posts that rank's name to the abort key, since it cannot);
//  - checks the abort key, which a failing rank (its terminate handler, or destroy_process_group
//    called from a catch block) or the launcher (a worker died) sets to a message naming it;
//  - notices when the store itself is gone (the process hosting it died).
// Then it aborts the process group (blocked and later collectives throw the message) and, if
// the process has not ended after `grace`, prints the message and exits with status 1.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "distributed/comm/process_group.h"
#include "distributed/store/store.h"

namespace colony::dist {

struct WatchdogOptions {
  std::chrono::milliseconds interval{200};
  std::chrono::milliseconds heartbeat_timeout{std::chrono::seconds(4)};
  std::chrono::milliseconds grace{std::chrono::seconds(3)};
  std::string store_description;  // "127.0.0.1:29500 (hosted by rank 0)", for messages
};

// Store keys (on the job store; `generation` separates launcher restarts).
std::string abort_key();
std::string heartbeat_key(int generation, int rank);
std::string left_key(int generation, int rank);
std::string progress_key(int generation, int rank);  // decimal: collectives the rank has started

class Watchdog final : public FailureMonitor {
 public:
  Watchdog(std::shared_ptr<Store> store, std::shared_ptr<ProcessGroup> group, int rank, int world_size,
           int generation, WatchdogOptions options);
  ~Watchdog() override;  // stops the thread

  // Sets the abort key (first writer wins) so every rank stops; used when this rank fails.
  void report_failure(const std::string& message) override;
  // Marks this rank as finished in order.
  void mark_left();
  void stop();
  // The message this job was aborted with, or "".
  std::string abort_message() const;
  // Why the job is failing, as far as anyone said: this rank's abort message, else the abort key
  // on the store (set by the failed rank or the launcher before the others notice), else "".
  std::string failure_cause() override;
  // The other ranks whose posted count of collectives started is below this rank's count now
  // (ranks that left in order, or never posted, are not counted).
  Stall stalled_ranks() override;

 private:
  void run();
  void trigger(const std::string& message);

  std::shared_ptr<Store> store_;
  std::shared_ptr<ProcessGroup> group_;
  int rank_, world_size_, generation_;
  WatchdogOptions options_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> left_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string abort_message_;
  std::thread thread_;
};

}  // namespace colony::dist
