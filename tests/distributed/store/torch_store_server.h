// A small server speaking PyTorch's TCPStore protocol (distributed/torch_store_protocol.h),
// written from the protocol for the tests of TorchTCPStore: it stands in for torchrun's agent
// store. One thread polls every connection on 127.0.0.1 and a free port.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "distributed/store/store.h"

namespace colony::dist::testing {

class TorchStoreServer {
 public:
  TorchStoreServer();
  ~TorchStoreServer();
  int port() const;
  // Every key and value the server holds, keys as sent (PyTorch's clients put "/" first).
  std::map<std::string, Bytes> data() const;
  // Sets a key as another client (torchrun's agent, a Python worker) would.
  void put(const std::string& key, const std::string& value);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace colony::dist::testing
