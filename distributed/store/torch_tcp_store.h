// A client of PyTorch's own TCPStore (torch_store_protocol.h), so Colony workers meet through the
// store torchrun's agent already hosts on MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True) instead
// of trying to host one on the same port.
//
// Like PyTorch's client it puts "/" before every key, so Python sees Colony's keys as
// store.get("colony/...") would name them. get() is WAIT then GET, with the store's timeout;
// a wait that times out is cancelled on the server (CANCEL_WAIT) so the connection stays usable.
// Thread-safe: calls share the one connection, one at a time.
#pragma once

#include <memory>
#include <string>

#include "distributed/store/store.h"
#include "distributed/store/store_socket.h"

namespace colony::dist {

struct TorchTCPStoreOptions {
  std::string host = "127.0.0.1";
  int port = 29500;
  // How long to keep retrying the connection, and the default for blocking calls.
  std::chrono::milliseconds timeout = Store::kDefaultTimeout;
  // For messages: "torchrun's store".
  std::string description = "PyTorch's TCPStore";
  // How often a worker still connecting says what it waits for (StoreConnectOptions).
  std::chrono::milliseconds progress_interval{std::chrono::seconds(5)};
  std::function<void(const std::string&)> progress;
};

class TorchTCPStore : public Store {
 public:
  explicit TorchTCPStore(TorchTCPStoreOptions options);
  ~TorchTCPStore() override;
  TorchTCPStore(const TorchTCPStore&) = delete;
  TorchTCPStore& operator=(const TorchTCPStore&) = delete;

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  using Store::set;
  using Store::wait;

  const std::string& where() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace colony::dist
