// Running an example program as a user does, for the tests of tests/examples: a shell command
// line's output (stdout and stderr together, as the command redirects them) and exit code.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace colony::testing {

struct Outcome {
  int exit_code = -1;
  std::string output;
};

inline Outcome run_command(const std::string& cmd) {
  Outcome r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline bool has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

}  // namespace colony::testing
