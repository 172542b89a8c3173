// The key-value store every rank of a job meets at: rendezvous (Gloo exchanges its addresses
// here), the abort flag that makes failures fast, and small agreements (counters, barriers).
//
// Store is the interface; TCPStore (tcp_store.h) is the one jobs use, hosted at
// MASTER_ADDR:MASTER_PORT; PrefixStore namespaces keys so several users of one store do not
// collide.
// All blocking calls end with TimeoutError after the store's timeout (or the one given).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace colony::dist {

using Bytes = std::vector<uint8_t>;

// A blocking store call or a collective that did not finish in time.
class TimeoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Any other store failure: connection lost, refused token, malformed reply.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Store {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{std::chrono::minutes(5)};

  explicit Store(std::chrono::milliseconds timeout = kDefaultTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;

  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Blocks until the key exists (or the store's timeout passes), then returns its value.
  virtual Bytes get(const std::string& key) = 0;
  // Adds `delta` to the integer at `key` (created as 0) atomically; returns the new value.
  // StoreError when the key holds something other than a decimal integer.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // Sets key to `desired` if its current value is `expected` (or if the key is absent and
  // `expected` is empty). Returns the value the key holds afterwards (PyTorch's semantics).
  virtual Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) = 0;
  // Blocks until every key exists; TimeoutError naming the missing keys otherwise.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  // Whether every key exists, without blocking.
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Removes the key; returns whether it existed.
  virtual bool delete_key(const std::string& key) = 0;

  // String conveniences.
  void set(const std::string& key, const std::string& value) { set(key, Bytes(value.begin(), value.end())); }
  std::string get_string(const std::string& key) {
    Bytes b = get(key);
    return std::string(b.begin(), b.end());
  }

  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 protected:
  std::chrono::milliseconds timeout_;
};

// Prepends "<prefix>/" to every key of an underlying store.
class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  using Store::set;
  using Store::wait;
  const std::shared_ptr<Store>& underlying() const { return store_; }

 private:
  std::string key(const std::string& k) const { return prefix_ + "/" + k; }
  std::vector<std::string> keys(const std::vector<std::string>& ks) const;
  std::string prefix_;
  std::shared_ptr<Store> store_;
};

}  // namespace colony::dist
