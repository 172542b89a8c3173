#include "nn/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace colony::io {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// This machine's name as it goes into temporary file names ('/' and '.' would break the pattern).
const std::string& host_name() {
  static const std::string name = [] {
    char buf[256] = {};
    if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == 0) return std::string("localhost");
    std::string n(buf);
    for (char& c : n)
      if (c == '/' || c == '.') c = '_';
    return n;
  }();
  return name;
}

}  // namespace

std::string temporary_path_for(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid()) + "." + host_name();
}

// Removes "<path>.tmp.<pid>.<this host>" files whose process no longer exists here: what a writer
// killed between create and rename leaves behind. Limits, all erring on the side of keeping files:
// - Only our exact pattern, for this very target, and only this host's files: on a shared file
//   system another host's pid means nothing here (two hosts with one name would defeat that).
// - A pid that has been reused by a live process keeps its file until that process ends too.
// - kill(pid, 0) answers for this pid namespace: a writer in another container with the same host
//   name is mistaken for a dead one only if its pid is free here as well.
// - Files of builds before this pattern ("<path>.tmp.<pid>", no host) are left alone.
void remove_stale_temporaries(const std::string& path) {
  const std::string prefix = base_of(path) + ".tmp.", suffix = "." + host_name();
  DIR* dir = ::opendir(dir_of(path).c_str());
  if (dir == nullptr) return;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.size() > 9 || digits[0] == '0' ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;  // pids are below 2^22 on Linux: 9 digits are plenty and cannot overflow
    }
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    ::unlinkat(::dirfd(dir), name.c_str(), 0);
  }
  ::closedir(dir);
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  remove_stale_temporaries(path);
  std::string tmp = temporary_path_for(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create", tmp);
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = saved;
      fail("cannot write", tmp);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // The descriptor is closed whether or not fsync succeeds (`fsync(fd) != 0 || close(fd) != 0`
  // skipped the close: 50 failed saves leaked 50 descriptors); the first error is the one reported.
  const bool synced = ::fsync(fd) == 0;
  int saved = errno;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed) {
    if (synced) saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail("cannot flush", tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail("cannot rename " + tmp + " to", path);
  }
  // The rename is durable only once the directory entry is on disk.
  int dfd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read " + path);
  return ss.str();
}

}  // namespace colony::io
