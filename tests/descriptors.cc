#include "tests/descriptors.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace colony::testing {
namespace {

// The sockets and pipes in a listing of descriptor targets, one per line.
std::string sockets_and_pipes(std::istream& listing) {
  std::string line, found;
  while (std::getline(listing, line))
    if (line.rfind("socket:", 0) == 0 || line.rfind("pipe:", 0) == 0) found += " " + line;
  return found;
}

}  // namespace

std::string sockets_and_pipes_held() {
  std::string all;
  for (int fd = 3; fd < 4096; ++fd) {
    char link[64], target[256];
    std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    all += std::string(target) + "\n";
  }
  std::istringstream in(all);
  return sockets_and_pipes(in);
}

int descriptors_held() {
  int count = 0;
  for (int fd = 3; fd < 4096; ++fd) {
    char link[64], target[256];
    std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    if (readlink(link, target, sizeof(target) - 1) > 0) ++count;
  }
  return count;
}

std::string sockets_and_pipes_a_child_inherits() {
  char path[] = "/tmp/colony_fds_XXXXXX";
  const int out = mkstemp(path);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out, 1);
    execl("/bin/sh", "sh", "-c",
          "for f in /proc/self/fd/*; do n=${f##*/}; [ \"$n\" -gt 2 ] && readlink \"$f\"; done; exit 0",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(out);
  std::ifstream in(path);
  std::string found = sockets_and_pipes(in);
  std::remove(path);
  return found;
}

}  // namespace colony::testing
