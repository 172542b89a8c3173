// A one-line progress bar on a terminal; on a pipe or file, one plain line at the end instead, so
// logs stay readable.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

class Progress {
 public:
  Progress(bool enabled, std::string label, int64_t total)
      : enabled_(enabled), tty_(isatty(STDERR_FILENO) != 0), label_(std::move(label)), total_(total),
        start_(std::chrono::steady_clock::now()) {}

  void update(int64_t done, const std::string& note) {
    if (!enabled_ || !tty_) return;
    auto now = std::chrono::steady_clock::now();
    if (done != total_ && now - last_ < std::chrono::milliseconds(100)) return;  // ~10 redraws per second
    last_ = now;
    int width = 30;
    int filled = total_ ? static_cast<int>(width * done / total_) : width;
    std::fprintf(stderr, "\r%s [%s%s] %lld/%lld %s", label_.c_str(), std::string(filled, '=').c_str(),
                 std::string(width - filled, ' ').c_str(), static_cast<long long>(done), static_cast<long long>(total_),
                 note.c_str());
    std::fflush(stderr);
  }

  void finish(int64_t done) {
    if (!enabled_) return;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (tty_) std::fprintf(stderr, "\n");
    else std::fprintf(stderr, "%s: %lld steps in %.1f s\n", label_.c_str(), static_cast<long long>(done), s);
  }

 private:
  bool enabled_, tty_;
  std::string label_;
  int64_t total_;
  std::chrono::steady_clock::time_point start_, last_;
};
