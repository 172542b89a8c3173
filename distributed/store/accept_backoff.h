// Pausing accept() while a server is out of file descriptors, shared by TCPStore's server and the
// test server of PyTorch's protocol. While connections wait in the backlog the listening socket
// stays readable and accept() fails at once (EMFILE): a poll loop that keeps polling it spins at
// a whole core. Paused instead, 10 ms doubling to 1 s, the connected clients are served and the
// waiting ones get in once descriptors are free.
#pragma once

#include <chrono>
#include <string>

namespace colony::dist {

class AcceptBackoff {
 public:
  using Clock = std::chrono::steady_clock;

  // `who` names the server in the one line said per episode: "the store on port 29500".
  explicit AcceptBackoff(std::string who) : who_(std::move(who)) {}

  // Whether to poll the listening socket now; while not, wake by paused_until().
  bool accepting(Clock::time_point now) const { return now >= paused_until_; }
  Clock::time_point paused_until() const { return paused_until_; }

  // accept() failed with `err`. For lack of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM) pauses
  // accepting, says so on stderr at the first failure of an episode, and returns true; false for
  // any other error (EAGAIN: nothing was pending).
  bool failed(int err);
  // accept() succeeded: the episode is over, the next pause starts at 10 ms again.
  void succeeded() { backoff_ = kFirst; }

 private:
  static constexpr std::chrono::milliseconds kFirst{10};
  static constexpr std::chrono::milliseconds kLongest{1000};

  std::string who_;
  Clock::time_point paused_until_{};
  std::chrono::milliseconds backoff_ = kFirst;
};

}  // namespace colony::dist
