#include "distributed/comm/comm_thread_wakeup.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace colony::dist::comm_detail {
namespace {

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("communication thread wakeup: ") + what + ": " + std::strerror(errno));
}

void drain(int fd) {
  uint64_t count;
  while (::read(fd, &count, sizeof count) > 0) {
  }
}

}  // namespace

CommThreadWakeup::CommThreadWakeup() {
  event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) fail("eventfd");
  timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (timer_fd_ < 0) {
    ::close(event_fd_);
    fail("timerfd_create");
  }
}

CommThreadWakeup::~CommThreadWakeup() {
  ::close(event_fd_);
  ::close(timer_fd_);
}

void CommThreadWakeup::signal() {
  const uint64_t one = 1;
  (void)!::write(event_fd_, &one, sizeof one);
}

void CommThreadWakeup::arm(Clock::time_point when) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(ns / 1000000000);
  spec.it_value.tv_nsec = static_cast<long>(ns % 1000000000);
  if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;  // 0 would disarm
  ::timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

void CommThreadWakeup::disarm() {
  const itimerspec off{};
  ::timerfd_settime(timer_fd_, 0, &off, nullptr);
}

void CommThreadWakeup::wait() {
  pollfd fds[2] = {{event_fd_, POLLIN, 0}, {timer_fd_, POLLIN, 0}};
  while (::poll(fds, 2, -1) < 0 && errno == EINTR) {
  }
  drain(event_fd_);
  drain(timer_fd_);
}

}  // namespace colony::dist::comm_detail
