#include "tests/distributed/store/torch_store_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "distributed/store/accept_backoff.h"
#include "distributed/store/torch_store_protocol.h"

namespace colony::dist::testing {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using torch_store::Decoded;
using torch_store::Query;

namespace {

// VALIDATE: the query byte and the u32 magic. Before it completes a connection may not make the
// server hold more.
constexpr size_t kValidateBytes = 5;

// PyTorch's server adds with std::stoll on the stored value and closes the connection when that
// throws; the same refusal without the exception (and without stoll's leniency: " 7", "7x").
bool parse_counter(const Bytes& v, int64_t* out) {
  const std::string s(v.begin(), v.end());
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE) return false;
  *out = x;
  return true;
}

}  // namespace

struct TorchStoreServer::Impl {
  struct Conn {
    Bytes in, out;
    Clock::time_point accepted = Clock::now();
    bool validated = false;
    std::vector<std::string> waiting;  // a WAIT not answered yet
    bool has_wait = false;
  };
  TorchStoreServerOptions options;
  int listen_fd = -1;
  int port = 0;
  int wake[2] = {-1, -1};
  std::atomic<bool> stop{false};
  std::thread thread;
  mutable std::mutex mu;
  std::map<std::string, Bytes> data;
  std::map<int, Conn> conns;
  AcceptBackoff accept_backoff{"the PyTorch-protocol test store"};

  bool all_exist(const std::vector<std::string>& keys) const {
    for (const auto& k : keys)
      if (!data.count(k)) return false;
    return true;
  }

  void wake_waiters() {
    for (auto& [fd, c] : conns) {
      if (c.has_wait && all_exist(c.waiting)) {
        c.has_wait = false;
        c.out.push_back(torch_store::kStopWaiting);
      }
    }
  }

  // False: close the connection (what PyTorch's server does on a protocol error).
  bool handle(Conn& c, const torch_store::Request& r) {
    if (!c.validated && r.query != Query::kValidate) return false;
    Bytes& out = c.out;
    switch (r.query) {
      case Query::kValidate:
        c.validated = true;
        return true;
      case Query::kPing:
        for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(r.number >> (8 * i)));
        return true;
      case Query::kSet:
        data[r.keys[0]] = r.values[0];
        wake_waiters();
        return true;
      case Query::kGet: {
        auto it = data.find(r.keys[0]);
        if (it == data.end()) return false;
        torch_store::put_string(out, it->second.data(), it->second.size());
        return true;
      }
      case Query::kAdd: {
        int64_t v = 0;
        auto it = data.find(r.keys[0]);
        if (it != data.end() && !parse_counter(it->second, &v)) return false;
        if (__builtin_add_overflow(v, r.delta, &v)) return false;
        const std::string s = std::to_string(v);
        data[r.keys[0]] = Bytes(s.begin(), s.end());
        torch_store::put_u64(out, static_cast<uint64_t>(v));
        wake_waiters();
        return true;
      }
      case Query::kCompareSet: {
        auto it = data.find(r.keys[0]);
        if (it == data.end()) {
          if (r.values[0].empty()) data[r.keys[0]] = r.values[1];
        } else if (it->second == r.values[0]) {
          it->second = r.values[1];
        }
        it = data.find(r.keys[0]);
        const Bytes& now = it == data.end() ? r.values[0] : it->second;
        torch_store::put_string(out, now.data(), now.size());
        wake_waiters();
        return true;
      }
      case Query::kCheck:
        out.push_back(all_exist(r.keys) ? torch_store::kReady : torch_store::kNotReady);
        return true;
      case Query::kWait:
        if (all_exist(r.keys)) {
          out.push_back(torch_store::kStopWaiting);
        } else {
          c.waiting = r.keys;
          c.has_wait = true;
        }
        return true;
      case Query::kCancelWait:
        c.has_wait = false;
        out.push_back(torch_store::kWaitCanceled);
        return true;
      case Query::kDeleteKey:
        torch_store::put_u64(out, data.erase(r.keys[0]));
        return true;
      case Query::kGetNumKeys:
        torch_store::put_u64(out, data.size());
        return true;
      default:
        return false;
    }
  }

  size_t unvalidated() const {
    size_t n = 0;
    for (const auto& [fd, c] : conns) n += c.validated ? 0 : 1;
    return n;
  }

  void drop(int fd) {
    close(fd);
    conns.erase(fd);
  }

  void drop_oldest_unvalidated() {
    int oldest = -1;
    Clock::time_point when = Clock::time_point::max();
    for (const auto& [fd, c] : conns)
      if (!c.validated && c.accepted < when) {
        oldest = fd;
        when = c.accepted;
      }
    if (oldest >= 0) drop(oldest);
  }

  void accept_all() {
    while (true) {
      const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        accept_backoff.failed(errno);
        return;
      }
      accept_backoff.succeeded();
      if (conns.size() >= static_cast<size_t>(std::max(1, options.max_connections))) {
        close(fd);  // full: refused at once rather than left waiting
        continue;
      }
      if (unvalidated() >= static_cast<size_t>(std::max(1, options.max_unauthenticated))) drop_oldest_unvalidated();
      conns[fd];
    }
  }

  // False: close this connection (peer gone, or it sent something the server does not accept).
  bool read_from(int fd, Conn& c) {
    uint8_t buf[65536];
    while (true) {
      // Before VALIDATE completes, read no more than it needs.
      size_t room = sizeof(buf);
      if (!c.validated) {
        if (c.in.size() >= kValidateBytes) return false;  // 5 bytes that do not start with VALIDATE
        room = kValidateBytes - c.in.size();
      }
      const ssize_t n = recv(fd, buf, room, 0);
      if (n == 0) return false;
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
      }
      c.in.insert(c.in.end(), buf, buf + n);
      while (!c.in.empty()) {
        torch_store::Request r;
        const auto d = torch_store::decode(c.in.data(), c.in.size(), &r);
        if (d.status == Decoded::kNeedMore) break;
        if (d.status == Decoded::kBad || !handle(c, r)) return false;
        c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(d.consumed));
      }
      if (c.out.size() > options.max_unsent_bytes) return false;
    }
  }

  // False: close this connection (the peer is gone).
  static bool flush(int fd, Conn& c) {
    while (!c.out.empty()) {
      const ssize_t n = send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        c.out.erase(c.out.begin(), c.out.begin() + n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
    return true;
  }

  void loop() {
    while (!stop) {
      auto now = Clock::now();
      const bool accepting = accept_backoff.accepting(now);
      std::vector<pollfd> fds{{accepting ? listen_fd : -1, POLLIN, 0}, {wake[0], POLLIN, 0}};
      int timeout = 1000;
      const auto wake_by = [&](Clock::time_point t) {
        const auto ms = std::chrono::duration_cast<milliseconds>(t - now).count();
        timeout = static_cast<int>(std::clamp<int64_t>(ms + 1, 0, timeout));
      };
      {
        std::lock_guard<std::mutex> lock(mu);
        for (auto& [fd, c] : conns) {
          fds.push_back({fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
          if (!c.validated) wake_by(c.accepted + options.hello_timeout);
        }
      }
      if (!accepting) wake_by(accept_backoff.paused_until());
      poll(fds.data(), fds.size(), timeout);
      if (stop) break;
      if (fds[1].revents & POLLIN) {
        char drain[64];
        (void)!read(wake[0], drain, sizeof(drain));
      }
      std::lock_guard<std::mutex> lock(mu);
      if (fds[0].revents & POLLIN) accept_all();
      for (size_t i = 2; i < fds.size(); ++i) {
        auto it = conns.find(fds[i].fd);
        if (it == conns.end() || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        if (!read_from(fds[i].fd, it->second)) drop(fds[i].fd);
      }
      // Flush every connection (a put() from the test thread may have answered a WAIT), and
      // close those that did not validate in time.
      now = Clock::now();
      std::vector<int> dead;
      for (auto& [fd, c] : conns)
        if (!flush(fd, c) || (!c.validated && now - c.accepted >= options.hello_timeout)) dead.push_back(fd);
      for (int fd : dead) drop(fd);
    }
  }

  void wake_loop() const { (void)!write(wake[1], "w", 1); }
};

TorchStoreServer::TorchStoreServer(TorchStoreServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (impl_->listen_fd < 0 || bind(impl_->listen_fd, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
      listen(impl_->listen_fd, 64) != 0 || getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 ||
      pipe2(impl_->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw std::runtime_error("TorchStoreServer: cannot listen on 127.0.0.1");
  }
  impl_->port = ntohs(a.sin_port);
  impl_->thread = std::thread([this] { impl_->loop(); });
}

TorchStoreServer::~TorchStoreServer() {
  impl_->stop = true;
  impl_->wake_loop();
  impl_->thread.join();
  for (auto& [fd, c] : impl_->conns) close(fd);
  close(impl_->listen_fd);
  close(impl_->wake[0]);
  close(impl_->wake[1]);
}

int TorchStoreServer::port() const { return impl_->port; }

TorchTCPStoreOptions TorchStoreServer::client_options() const {
  TorchTCPStoreOptions o;
  o.port = impl_->port;
  o.timeout = std::chrono::seconds(5);
  return o;
}

std::map<std::string, Bytes> TorchStoreServer::data() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->data;
}

void TorchStoreServer::put(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->data[key] = Bytes(value.begin(), value.end());
  impl_->wake_waiters();
  impl_->wake_loop();  // the replies go out from the server's thread
}

}  // namespace colony::dist::testing
