// `bazel run` starts a program in its runfiles tree, so a relative path on its command line
// (--data, --checkpoint, --metrics) would land there; the examples move back to the folder the
// user ran bazel from, which bazel names in BUILD_WORKING_DIRECTORY (unset when the binary is run
// directly, and then nothing changes).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace colony::examples {

inline void run_in_callers_folder() {
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(wd) != 0) std::perror("chdir to BUILD_WORKING_DIRECTORY");
  }
}

}  // namespace colony::examples
