#include "distributed/gloo/transport.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace colony::dist::gloo_detail {

void GlooStoreAdapter::set(const std::string& key, const std::vector<char>& data) {
  store_->set(key, Bytes(data.begin(), data.end()));
}

std::vector<char> GlooStoreAdapter::get(const std::string& key) {
  Bytes b = store_->get(key);
  return std::vector<char>(b.begin(), b.end());
}

void GlooStoreAdapter::wait(const std::vector<std::string>& keys) { store_->wait(keys, store_->timeout()); }

void GlooStoreAdapter::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  // The shorter of gloo's wish and the store's own limit: see the class comment.
  store_->wait(keys, std::min(timeout, store_->timeout()));
}

namespace {

const char* nonempty_env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

bool is_loopback_name(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr a{};
  if (inet_pton(AF_INET, host.c_str(), &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
  return false;
}

// The local address of a UDP socket connected to host (port irrelevant: nothing is sent).
std::string local_address_towards(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), "9", &hints, &res) != 0 || res == nullptr) return "";
  std::string out;
  for (addrinfo* ai = res; ai != nullptr && out.empty(); ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof(local);
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      char buf[INET6_ADDRSTRLEN] = {0};
      const void* src = local.ss_family == AF_INET
                            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
                            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
      if (inet_ntop(local.ss_family, src, buf, sizeof(buf)) != nullptr) out = buf;
    }
    close(fd);
  }
  freeaddrinfo(res);
  return out;
}

}  // namespace

void ignore_sigpipe_if_default() {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL)
    signal(SIGPIPE, SIG_IGN);
}

TransportChoice choose_transport() {
  TransportChoice c;
  for (const char* var : {"COLONY_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"}) {
    if (const char* v = nonempty_env(var)) {
      std::string names = v;
      c.attr.iface = names.substr(0, names.find(','));
      c.description = "interface " + c.attr.iface + " (" + var + "=" + names + ")";
      return c;
    }
  }
  const char* master = nonempty_env("MASTER_ADDR");
  if (master == nullptr || is_loopback_name(master)) {
    c.attr.hostname = "127.0.0.1";
    c.description = master == nullptr ? "127.0.0.1 (MASTER_ADDR is unset: a single-machine job)"
                                      : std::string("127.0.0.1 (MASTER_ADDR ") + master + " is a loopback address)";
    return c;
  }
  std::string local = local_address_towards(master);
  if (!local.empty()) {
    c.attr.hostname = local;
    c.description = local + " (the local address that reaches MASTER_ADDR " + master + ")";
    return c;
  }
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  c.attr.hostname = host;
  c.description = std::string(host) + " (this machine's hostname; no route to MASTER_ADDR " + master +
                  " was found; set COLONY_SOCKET_IFNAME to choose an interface)";
  return c;
}

std::vector<int> broken_peers(::gloo::Context& context) {
  // A slot prefix no gloo collective uses, so a probe can never be mistaken for data.
  constexpr uint8_t kProbeSlotPrefix = 0x7e;
  char byte = 0;
  auto buf = context.createUnboundBuffer(&byte, 1);
  const uint64_t slot = ::gloo::Slot::build(kProbeSlotPrefix, 0);
  std::vector<int> broken;
  for (int r = 0; r < context.size; ++r) {
    if (r == context.rank) continue;
    try {
      buf->send(r, slot, 0, 0);
    } catch (const std::exception&) {
      broken.push_back(r);
    }
  }
  return broken;
}

std::vector<int> open_descriptors() {
  std::vector<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  const int own = dirfd(dir);
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const int fd = std::atoi(e->d_name);
    if (fd != own) fds.push_back(fd);
  }
  closedir(dir);
  std::sort(fds.begin(), fds.end());
  return fds;
}

void close_on_exec_since(const std::vector<int>& before) {
  for (int fd : open_descriptors()) {
    if (std::binary_search(before.begin(), before.end(), fd)) continue;
    char link[64], target[64] = {0};
    std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    if (readlink(link, target, sizeof(target) - 1) <= 0) continue;
    const std::string what = target;
    if (what.rfind("socket:", 0) != 0 && what != "anon_inode:[eventpoll]") continue;
    const int flags = fcntl(fd, F_GETFD);
    if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

}  // namespace colony::dist::gloo_detail
