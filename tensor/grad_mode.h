// Whether differentiable ops record graph nodes on this thread (torch.is_grad_enabled()).
// It lives in tensor/ because in-place writes consult it; autograd/ re-exports NoGradGuard.
#pragma once

namespace colony {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Disables graph recording in a scope (torch::NoGradGuard).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// Re-enables recording inside a no-grad scope (torch::AutoGradMode(true)).
class EnableGradGuard {
 public:
  explicit EnableGradGuard(bool enabled = true) : prev_(GradMode::is_enabled()) {
    GradMode::set_enabled(enabled);
  }
  ~EnableGradGuard() { GradMode::set_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace colony
