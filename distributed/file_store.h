// FileStore: the job's key-value store kept in one shared file, for processes on one machine
// that should not (or cannot) open a TCP port: tests, and users without networking. It is
// PyTorch's FileStore idea ("file:///tmp/init" as the init method).
//
// - The file is an append-only log of set/delete records behind a small header. Every process
//   keeps the map it has parsed so far and reads only what others appended since.
// - Atomicity comes from flock(2): reads hold a shared lock, every change (set, add,
//   compare_set, delete) holds an exclusive lock across its read-modify-append, so add() is an
//   exact counter across processes.
// - get() and wait() block by re-reading the file with a short sleep between tries (1 ms growing
//   to 10 ms) until the keys exist or the timeout passes (TimeoutError naming the keys).
// - Thread-safe: threads of one process share the open file under a mutex (flock does not
//   exclude threads that share an open file); a blocking get() does not hold it while sleeping.
//
// Deliberate differences from PyTorch: the file is never deleted by the store (PyTorch removes it
// when its last user closes it, which goes wrong when a process crashes); use a fresh path per
// job, since a stale file would hand the previous job's keys to the next. add() on a value that is
// not a decimal integer throws StoreError instead of failing inside the store.
#pragma once

#include <memory>
#include <string>

#include "distributed/store.h"

namespace colony::dist {

class FileStore : public Store {
 public:
  // Opens (creating it when absent, mode 0600) the store file at `path`; its directory must exist.
  // StoreError when the file cannot be opened or is not a FileStore file.
  explicit FileStore(std::string path, std::chrono::milliseconds timeout = kDefaultTimeout);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  using Store::set;
  using Store::wait;

  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace colony::dist
