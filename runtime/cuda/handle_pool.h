// The library handles each thread uses on each device: cuBLAS's, with its per-stream workspaces
// (blas.cc), and cuDNN's (cudnn_conv.cc). A handle must not be used by two threads at once, so a
// thread keeps its own; when the thread exits they come back here, and the next thread that needs
// one takes it. A program that starts a thread per request thus makes as many handles as it ever
// ran threads at once, not one handle and one 32 MiB cuBLAS workspace for every thread it started.
//
// Nothing is ever destroyed: destroying a handle at thread or process exit can run after the CUDA
// driver has shut down. The pool itself is allocated and never freed, since threads (the main
// one among them) may exit after static objects are destroyed:
//
//   static auto* pool = new HandlePool<CublasHandle>;
//   thread_local HandlePool<CublasHandle>::Lease lease(*pool);
//   CublasHandle& h = lease.get(device, [](int device) { return make_handle(device); });
//
// Plain C++ (no CUDA), so that tests run it on any host with fake handles.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace colony::kernels::cuda {

template <typename H>
class HandlePool {
 public:
  // Makes a handle for `device`, which is current on the calling thread. May throw: then nothing
  // is taken and the next get() tries again.
  using Create = std::function<std::unique_ptr<H>(int device)>;

  // One thread's handles, one per device it used, given back to the pool when the lease ends.
  class Lease {
   public:
    explicit Lease(HandlePool& pool) : pool_(pool) {}
    ~Lease() {
      for (size_t d = 0; d < held_.size(); ++d)
        if (held_[d] != nullptr) pool_.give_back(static_cast<int>(d), held_[d]);
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    // This lease's handle for `device`: the one it holds, else an idle one from the pool, else a
    // new one from `create`.
    H& get(int device, const Create& create) {
      if (device < 0) throw std::invalid_argument("HandlePool: device " + std::to_string(device) + " is negative");
      if (static_cast<size_t>(device) >= held_.size()) held_.resize(device + 1, nullptr);
      H*& h = held_[device];
      if (h == nullptr) h = pool_.take(device, create);
      return *h;
    }

   private:
    HandlePool& pool_;
    std::vector<H*> held_;  // by device; null where this thread has none
  };

  // How many handles were made for `device`, and how many of them are idle (no thread holds them).
  size_t created(int device) const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<size_t>(device) < created_.size() ? created_[device] : 0;
  }
  size_t idle(int device) const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<size_t>(device) < idle_.size() ? idle_[device].size() : 0;
  }

 private:
  H* take(int device, const Create& create) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      grow(device);
      if (!idle_[device].empty()) {
        H* h = idle_[device].back();
        idle_[device].pop_back();
        return h;
      }
    }
    // Outside the lock: making a handle takes milliseconds, and other threads may need idle ones.
    H* h = create(device).release();
    if (h == nullptr) throw std::runtime_error("HandlePool: making a handle for device " + std::to_string(device) +
                                               " returned none");
    std::lock_guard<std::mutex> lock(mu_);
    ++created_[device];
    return h;
  }

  void give_back(int device, H* h) {
    std::lock_guard<std::mutex> lock(mu_);
    grow(device);
    idle_[device].push_back(h);
  }

  void grow(int device) {
    if (static_cast<size_t>(device) >= idle_.size()) {
      idle_.resize(device + 1);
      created_.resize(device + 1, 0);
    }
  }

  mutable std::mutex mu_;
  std::vector<std::vector<H*>> idle_;  // by device
  std::vector<size_t> created_;        // by device
};

}  // namespace colony::kernels::cuda
