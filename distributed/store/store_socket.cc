#include "distributed/store/store_socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

namespace colony::dist {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string errno_text(int e) { return std::strerror(e); }

int64_t whole_seconds(milliseconds ms) { return std::max<int64_t>(0, (ms.count() + 500) / 1000); }

}  // namespace

in_addr resolve_host(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    throw StoreError("cannot resolve host \"" + host + "\": " + gai_strerror(rc));
  }
  in_addr a = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  freeaddrinfo(res);
  return a;
}

std::string waiting_message(const StoreConnectOptions& o, milliseconds waited, const std::string& last_error) {
  return "colony: still waiting for " + o.description + " at " + o.host + ":" + std::to_string(o.port) + ": " +
         std::to_string(whole_seconds(waited)) + " s so far, " + std::to_string(whole_seconds(o.timeout - waited)) +
         " s left" + (last_error.empty() ? "" : " (last error: " + last_error + ")");
}

void report_progress(const std::function<void(const std::string&)>& report, const std::string& message) {
  if (report) {
    report(message);
    return;
  }
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
}

StoreSocket::StoreSocket(const StoreConnectOptions& o)
    : where_(o.host + ":" + std::to_string(o.port)), description_(o.description) {
  const in_addr addr = resolve_host(o.host);
  const auto start = Clock::now();
  const auto deadline = start + o.timeout;
  auto next_report = start + o.progress_interval;
  milliseconds backoff(10);
  std::string last_error;
  while (true) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) throw StoreError("socket() failed: " + errno_text(errno));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr = addr;
    sa.sin_port = htons(static_cast<uint16_t>(o.port));
    if (connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0) {
      int one = 1;
      setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      fd_ = s;
      return;
    }
    last_error = errno_text(errno);
    close(s);
    const auto now = Clock::now();
    if (now + backoff > deadline) {
      throw StoreError("could not connect to " + o.description + " at " + where_ + " within " +
                       std::to_string(o.timeout.count()) + " ms (last error: " + last_error + ")");
    }
    if (now >= next_report) {
      report_progress(o.progress, waiting_message(o, std::chrono::duration_cast<milliseconds>(now - start), last_error));
      next_report = now + o.progress_interval;
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, milliseconds(1000));
  }
}

StoreSocket::~StoreSocket() {
  if (fd_ >= 0) close(fd_);
}

void StoreSocket::lost() const {
  throw StoreError("lost connection to " + description_ + " at " + where_ +
                   " (the process hosting it probably exited)");
}

void StoreSocket::send_all(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t off = 0;
  while (off < n) {
    ssize_t k = send(fd_, p + off, n - off, MSG_NOSIGNAL);
    if (k > 0) {
      off += static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    lost();
  }
}

bool StoreSocket::wait_readable(milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (true) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    pollfd pfd{fd_, POLLIN, 0};
    int rc = poll(&pfd, 1, static_cast<int>(std::clamp<int64_t>(left, 0, 1000)));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) lost();
    if (left <= 0) return false;
  }
}

bool StoreSocket::wait_for_answer(const StoreConnectOptions& o, const std::string& status) {
  const auto start = Clock::now();
  while (!wait_readable(std::min(o.progress_interval, o.timeout))) {
    const auto waited = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    if (waited >= o.timeout) return false;
    report_progress(o.progress, waiting_message(o, waited, status));
  }
  return true;
}

void StoreSocket::recv_exact(void* out, size_t n, milliseconds limit) {
  auto* p = static_cast<uint8_t*>(out);
  const auto deadline = Clock::now() + limit;
  size_t got = 0;
  while (got < n) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || !wait_readable(left)) {
      throw StoreError(description_ + " at " + where_ + " stopped answering");
    }
    ssize_t k = recv(fd_, p + got, n - got, 0);
    if (k > 0) {
      got += static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    lost();
  }
}

}  // namespace colony::dist
