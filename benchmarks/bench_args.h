// The --threads N and --trials N flags the kernel benchmarks share (activation_bench, norm_bench,
// sdpa_bench), parsed once: anything else prints the usage and exits with 2.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace colony::bench {

struct ThreadsTrials {
  int threads;
  int trials;
};

// `defaults` holds each benchmark's own defaults; the flags given override them. Values below 1
// print what was wrong and exit with 2 too.
inline ThreadsTrials parse_threads_trials(int argc, char** argv, ThreadsTrials defaults) {
  for (int i = 1; i < argc; i += 2) {
    const bool known = i + 1 < argc && (!std::strcmp(argv[i], "--threads") || !std::strcmp(argv[i], "--trials"));
    if (!known) {
      std::fprintf(stderr, "%s: unknown or incomplete argument %s (usage: %s [--threads N] [--trials N])\n", argv[0],
                   argv[i], argv[0]);
      std::exit(2);
    }
    (!std::strcmp(argv[i], "--threads") ? defaults.threads : defaults.trials) = std::atoi(argv[i + 1]);
  }
  if (defaults.threads < 1 || defaults.trials < 1) {
    std::fprintf(stderr, "%s: --threads and --trials must be at least 1\n", argv[0]);
    std::exit(2);
  }
  return defaults;
}

}  // namespace colony::bench
