// Raw client sockets for the store servers' tests: connections that misbehave (say nothing, send
// garbage, never read) as a careless or hostile client would.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <vector>

namespace colony::testing {

// A blocking connection to 127.0.0.1:port; -1 when refused.
inline int raw_connect(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  if (connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    close(s);
    return -1;
  }
  return s;
}

inline void raw_send(int s, const std::vector<uint8_t>& b) { send(s, b.data(), b.size(), MSG_NOSIGNAL); }

// True when the server closed the connection (recv sees EOF, possibly after reply bytes) within 5 s.
inline bool closed_by_server(int s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{s, POLLIN, 0};
    if (poll(&pfd, 1, 100) <= 0) continue;
    char buf[256];
    ssize_t n = recv(s, buf, sizeof(buf), 0);
    if (n <= 0) return true;
  }
  return false;
}

// CPU time this process has used, in seconds (a server that spins uses ~1 per second).
inline double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

}  // namespace colony::testing
