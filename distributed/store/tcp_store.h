// The job's key-value store over TCP. One process hosts the server (rank 0, or the colonyrun
// launcher of node 0) at MASTER_ADDR:MASTER_PORT; every rank connects as a client.
//
// - Port 0 with is_server: the server picks a free port; port() says which.
// - Clients retry connecting with exponential backoff until the timeout, so ranks may start in
//   any order.
// - Every client presents the job's token (options.token, else COLONY_JOB_TOKEN, else ""); the
//   server refuses connections with another token. Malformed or oversized messages close that
//   one connection; the server keeps serving the others.
// - Thread-safe: calls from several threads share the one connection, one at a time. A thread
//   that must not wait behind another thread's blocking get() (a watchdog) uses its own TCPStore.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "distributed/store/store.h"

namespace colony::dist {

struct TCPStoreOptions {
  std::string host = "127.0.0.1";
  int port = 29500;
  // Host the server in this process (on a background thread); this object is also a client of it.
  bool is_server = false;
  // How long to keep retrying the connection, and the default for blocking calls.
  std::chrono::milliseconds timeout = Store::kDefaultTimeout;
  // nullopt: COLONY_JOB_TOKEN from the environment, or "" when that is unset.
  std::optional<std::string> token;
};

class TCPStore : public Store {
 public:
  explicit TCPStore(TCPStoreOptions options);
  ~TCPStore() override;
  TCPStore(const TCPStore&) = delete;
  TCPStore& operator=(const TCPStore&) = delete;

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  using Store::set;
  using Store::wait;

  const std::string& host() const;
  // The port the server listens on (the chosen one when options.port was 0).
  int port() const;
  bool is_server() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace colony::dist
