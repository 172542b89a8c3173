// For the store servers' tests: raw client sockets that misbehave (say nothing, send garbage,
// never read) as a careless or hostile client would, running a server out of descriptors, and
// protocol bytes written out by hand.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <thread>
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

// With this process's descriptor limit lowered to those open now plus 8, opens connections to
// 127.0.0.1:port until refused (clients take descriptors here too, so the server soon cannot
// accept the last ones), and returns the CPU seconds the process then spends in 1 s: a server
// that spins on accept() uses ~1. The connections are closed and the limit restored after.
inline double cpu_seconds_while_out_of_descriptors(int port) {
  rlimit old{};
  getrlimit(RLIMIT_NOFILE, &old);
  int open_now = 0;
  for (int fd = 0; fd < 4096; ++fd) open_now += fcntl(fd, F_GETFD) >= 0 ? 1 : 0;
  rlimit tight = old;
  tight.rlim_cur = static_cast<rlim_t>(open_now + 8);
  if (setrlimit(RLIMIT_NOFILE, &tight) != 0) return -1;
  std::vector<int> clients;
  for (int i = 0; i < 64; ++i) {
    const int s = raw_connect(port);
    if (s < 0) break;
    clients.push_back(s);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double cpu0 = cpu_seconds();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double spent = cpu_seconds() - cpu0;
  for (int s : clients) close(s);
  setrlimit(RLIMIT_NOFILE, &old);
  return spent;
}

// "01 0200000000000000 2f61" -> those bytes (spaces ignored): a protocol's bytes written by hand.
inline std::vector<uint8_t> from_hex(const std::string& text) {
  std::vector<uint8_t> out;
  std::string digits;
  for (char c : text)
    if (c != ' ') digits += c;
  for (size_t i = 0; i + 1 < digits.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  return out;
}

inline std::string to_hex(const std::vector<uint8_t>& bytes) {
  std::string s;
  char two[4];
  for (uint8_t x : bytes) {
    std::snprintf(two, sizeof(two), "%02X", x);
    s += two;
  }
  return s;
}

}  // namespace colony::testing
