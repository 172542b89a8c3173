// Internal to the DataLoader: one pass (one `for (auto& batch : loader)`) as its Iterator sees it.
// MapPass (dataloader.cc) loads a map-style Dataset in the sampler's order; StreamPass
// (stream_pass.h) reads an IterableDataset's streams.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>

#include "data/dataset.h"

namespace colony::data::detail {

class LoaderPass {
 public:
  virtual ~LoaderPass() = default;
  // True once the last batch was consumed or loading failed.
  virtual bool done() const = 0;
  // The batch the loop sees now; valid until advance().
  virtual Batch& current() = 0;
  // Moves to the next batch (the first, on a new pass), rethrowing a loading error as DataLoaderError.
  virtual void advance() = 0;
  // Stops the workers and ends the pass (done() turns true): a new pass needs the persistent
  // workers. Idempotent.
  virtual void abandon() = 0;
};

// "DataLoader timed out after T seconds" (PyTorch's message; T as %g prints it).
std::string timed_out_message(double seconds);

// Waits on cv (lock held) until ready(); with the loader's timeout (seconds > 0, else for ever).
// False when the timeout passed first.
template <typename Ready>
bool wait_for_batch(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, double seconds, Ready ready) {
  if (seconds <= 0) {
    cv.wait(lock, ready);
    return true;
  }
  return cv.wait_for(lock, std::chrono::duration<double>(seconds), ready);
}

// Throws DataLoaderError("DataLoader: <where>: <the error's message>"), nesting `error`
// (std::rethrow_if_nested gives it back).
[[noreturn]] void rethrow_as_loader_error(const std::exception_ptr& error, const std::string& where);

}  // namespace colony::data::detail
