// The client side of a store connection, shared by TCPStore (Colony's own protocol) and
// TorchTCPStore (PyTorch's): resolving the host, connecting with retry while telling the user
// what it waits for, and whole-message send / bounded receive on the socket.
//
// Sockets are created close-on-exec, so a store connection never leaks into a process the
// program spawns (colonyrun's workers, a data loader's helper).
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "distributed/store/store.h"

namespace colony::dist {

// IPv4 address of `host` ("localhost", a name, or dotted quad); StoreError when it has none.
in_addr resolve_host(const std::string& host);

struct StoreConnectOptions {
  std::string host;
  int port = 0;
  // How long to keep retrying.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  // What the store is, for messages: "the job's store (hosted by rank 0)", "torchrun's store".
  std::string description = "the store";
  // While retrying, `progress` is told every this often what is awaited, for how long so far
  // and how long is left (a worker would otherwise sit silent for the whole timeout).
  std::chrono::milliseconds progress_interval{std::chrono::seconds(5)};
  // Where those messages go; empty: standard error, one line each.
  std::function<void(const std::string&)> progress;
};

// One "waiting for ..." line: "colony: still waiting for torchrun's store at 10.0.0.1:29500:
// 5 s so far, 595 s left (last error: Connection refused)".
std::string waiting_message(const StoreConnectOptions& o, std::chrono::milliseconds waited,
                            const std::string& last_error);

// Sends `message` through `report`, or to standard error when it is empty.
void report_progress(const std::function<void(const std::string&)>& report, const std::string& message);

class StoreSocket {
 public:
  // Connects, retrying with exponential backoff (10 ms .. 1 s) until o.timeout; StoreError naming
  // the address, the time waited and the last error otherwise.
  explicit StoreSocket(const StoreConnectOptions& o);
  ~StoreSocket();
  StoreSocket(const StoreSocket&) = delete;
  StoreSocket& operator=(const StoreSocket&) = delete;

  int fd() const { return fd_; }
  // "host:port".
  const std::string& where() const { return where_; }

  // StoreError (connection lost) when the peer is gone.
  void send_all(const void* data, size_t n);
  void send_all(const Bytes& b) { send_all(b.data(), b.size()); }
  // Waits up to `limit` for data to read; false when none came.
  bool wait_readable(std::chrono::milliseconds limit);
  // Waits up to o.timeout for the first answer of a store that accepted the connection, telling
  // o.progress every o.progress_interval what it waits for (waiting_message with `status`, e.g.
  // "connected, no answer to the hello yet"); false when none came. A stopped store process, or
  // another program on the port, would otherwise leave the worker silent for the whole timeout.
  bool wait_for_answer(const StoreConnectOptions& o, const std::string& status);
  // Reads exactly n bytes within `limit`; StoreError when the peer closed or stayed silent.
  void recv_exact(void* out, size_t n, std::chrono::milliseconds limit);

  // The error for a lost connection: names the store and who probably went away.
  [[noreturn]] void lost() const;

 private:
  int fd_ = -1;
  std::string where_;
  std::string description_;
};

}  // namespace colony::dist
