// Fuzz target: the TCP store server's message decoder. The decoder is private to tcp_store.cc
// (not callable on its own), so this drives the smallest existing entry point: a TCPStore server
// in this process (token "fuzz"), to which each input is sent as the whole byte stream of one
// connection. Then the server must still answer a well-behaved client. Seeds begin with a valid
// hello ("CLNY", version 1, the token) so that mutants reach the commands.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "distributed/store/tcp_store.h"

namespace {

using colony::dist::TCPStore;
using colony::dist::TCPStoreOptions;

TCPStore& server() {
  static std::unique_ptr<TCPStore> s = [] {
    TCPStoreOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.is_server = true;
    o.token = "fuzz";
    o.timeout = std::chrono::seconds(10);
    return std::make_unique<TCPStore>(o);
  }();
  return *s;
}

// Sends `data` on a fresh connection and reads the replies until the server closes or stays
// silent for 5 ms (at most 2 s). The sending side is not shut down first: the server drops a
// connection at end of stream before decoding what it buffered, which would hide the commands.
void send_stream(const uint8_t* data, size_t size) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) std::abort();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server().port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::perror("fuzz: connect to the store");
    std::abort();
  }
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server closed on a bad message: fine
    sent += static_cast<size_t>(n);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5) <= 0) break;
    if (::recv(fd, buf, sizeof(buf), 0) <= 0) break;
  }
  ::close(fd);
}

// The server still serves: a client with the right token sets and reads back a key.
void check_alive() {
  static long round = 0;
  TCPStoreOptions o;
  o.host = "127.0.0.1";
  o.port = server().port();
  o.token = "fuzz";
  o.timeout = std::chrono::seconds(10);
  TCPStore client(o);
  const std::string key = "alive/" + std::to_string(round++);
  client.set(key, std::vector<uint8_t>{1, 2, 3});
  if (client.get(key) != std::vector<uint8_t>{1, 2, 3}) {
    std::fprintf(stderr, "fuzz: the store answered a good client wrongly after a hostile one\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static long runs = 0;
  send_stream(data, size);
  if (++runs % 50 == 1) check_alive();
  return 0;
}
