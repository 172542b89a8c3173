// The job's key-value store over TCP. One process hosts the server (rank 0, or the colonyrun
// launcher of node 0) at MASTER_ADDR:MASTER_PORT; every rank connects as a client.
//
// - Port 0 with is_server: the server picks a free port; port() says which.
// - Clients retry connecting with exponential backoff until the timeout, so ranks may start in
//   any order, saying every few seconds what they wait for (store_socket.h).
// - Every client presents the job's token (options.token, else COLONY_JOB_TOKEN, else ""); the
//   server refuses connections with another token. Malformed or oversized messages close that
//   one connection; the server keeps serving the others. Connections that do not authenticate
//   are bounded in time, number and buffered bytes (TCPStoreOptions), so stray or hostile
//   clients cannot starve the job.
// - Thread-safe: calls from several threads share the one connection, one at a time. A thread
//   that must not wait behind another thread's blocking get() (a watchdog) uses its own TCPStore.
#pragma once

#include <functional>
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
  // What the store is, for messages ("the job's store (hosted by rank 0)").
  std::string description = "the job's store";
  // While connecting, say every this often what is awaited; `progress` receives the lines
  // (empty: standard error).
  std::chrono::milliseconds progress_interval{std::chrono::seconds(5)};
  std::function<void(const std::string&)> progress;

  // Server limits. Our clients say hello in their first packet, so 10 s is only ever reached by
  // a stray or hostile connection; a job holds two connections per rank and one per node, so
  // 8192 covers 4,000 ranks; 64 silent connections at once are plenty for ranks starting
  // together, and a 65th evicts the oldest silent one, so a flood cannot lock ranks out.
  std::chrono::milliseconds hello_timeout{std::chrono::seconds(10)};
  int max_connections = 8192;
  int max_unauthenticated = 64;
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
