// A small server speaking PyTorch's TCPStore protocol (distributed/store/torch_store_protocol.h),
// for the tests of TorchTCPStore: it stands in for torchrun's agent store. One thread polls every
// connection on 127.0.0.1 and a free port.
//
// Test code, but a test server that dies or blocks makes flaky tests, so it keeps the production
// store's limits (TCPStoreOptions): sockets are non-blocking and replies wait in a buffer while a
// client does not read; a connection that has not sent VALIDATE within hello_timeout is closed,
// and nothing it sends is buffered past the 5 bytes of VALIDATE; at most max_unauthenticated wait
// to validate (a new one evicts the oldest) and past max_connections new ones are closed at once;
// out of descriptors it pauses accept() (AcceptBackoff) instead of spinning. Requests PyTorch's
// server fails on (GET of a missing key, ADD to a value that is not a decimal integer or would
// overflow) close that connection only, as PyTorch's does when its handler throws.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "distributed/store/store.h"
#include "distributed/store/tcp_store.h"
#include "distributed/store/torch_tcp_store.h"

namespace colony::dist::testing {

struct TorchStoreServerOptions {
  std::chrono::milliseconds hello_timeout = TCPStoreOptions{}.hello_timeout;
  int max_connections = TCPStoreOptions{}.max_connections;
  int max_unauthenticated = TCPStoreOptions{}.max_unauthenticated;
  // Replies a client has not read beyond this close its connection (two of the largest values).
  size_t max_unsent_bytes = size_t{128} << 20;
};

class TorchStoreServer {
 public:
  explicit TorchStoreServer(TorchStoreServerOptions options = {});
  ~TorchStoreServer();
  TorchStoreServer(const TorchStoreServer&) = delete;
  TorchStoreServer& operator=(const TorchStoreServer&) = delete;

  int port() const;
  // A TorchTCPStore client's options for this server (5 s timeout).
  TorchTCPStoreOptions client_options() const;
  // Every key and value the server holds, keys as sent (PyTorch's clients put "/" first).
  std::map<std::string, Bytes> data() const;
  // Sets a key as another client (torchrun's agent, a Python worker) would.
  void put(const std::string& key, const std::string& value);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace colony::dist::testing
