#include "tests/distributed/store/torch_store_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "distributed/store/torch_store_protocol.h"

namespace colony::dist::testing {

using torch_store::Decoded;
using torch_store::Query;

struct TorchStoreServer::Impl {
  struct Conn {
    Bytes in;
    bool validated = false;
    std::vector<std::string> waiting;  // a WAIT not answered yet
    bool has_wait = false;
  };
  int listen_fd = -1;
  int port = 0;
  std::atomic<bool> stop{false};
  std::thread thread;
  mutable std::mutex mu;
  std::map<std::string, Bytes> data;
  std::map<int, Conn> conns;

  static void reply(int fd, const Bytes& b) { (void)!send(fd, b.data(), b.size(), MSG_NOSIGNAL); }

  bool all_exist(const std::vector<std::string>& keys) const {
    for (const auto& k : keys)
      if (!data.count(k)) return false;
    return true;
  }

  void wake_waiters() {
    for (auto& [fd, c] : conns) {
      if (c.has_wait && all_exist(c.waiting)) {
        c.has_wait = false;
        reply(fd, {torch_store::kStopWaiting});
      }
    }
  }

  // False: close the connection (what PyTorch's server does on a protocol error).
  bool handle(int fd, Conn& c, const torch_store::Request& r) {
    if (!c.validated && r.query != Query::kValidate) return false;
    Bytes out;
    switch (r.query) {
      case Query::kValidate:
        c.validated = true;
        return true;
      case Query::kPing:
        for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(r.number >> (8 * i)));
        break;
      case Query::kSet:
        data[r.keys[0]] = r.values[0];
        wake_waiters();
        return true;
      case Query::kGet: {
        auto it = data.find(r.keys[0]);
        if (it == data.end()) return false;
        torch_store::put_string(out, it->second.data(), it->second.size());
        break;
      }
      case Query::kAdd: {
        int64_t v = 0;
        auto it = data.find(r.keys[0]);
        if (it != data.end()) v = std::stoll(std::string(it->second.begin(), it->second.end()));
        v += r.delta;
        const std::string s = std::to_string(v);
        data[r.keys[0]] = Bytes(s.begin(), s.end());
        torch_store::put_u64(out, static_cast<uint64_t>(v));
        wake_waiters();
        break;
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
        break;
      }
      case Query::kCheck:
        out.push_back(all_exist(r.keys) ? torch_store::kReady : torch_store::kNotReady);
        break;
      case Query::kWait:
        if (all_exist(r.keys)) {
          out.push_back(torch_store::kStopWaiting);
        } else {
          c.waiting = r.keys;
          c.has_wait = true;
          return true;
        }
        break;
      case Query::kCancelWait:
        c.has_wait = false;
        out.push_back(torch_store::kWaitCanceled);
        break;
      case Query::kDeleteKey:
        torch_store::put_u64(out, data.erase(r.keys[0]));
        break;
      default:
        return false;
    }
    reply(fd, out);
    return true;
  }

  void loop() {
    while (!stop) {
      std::vector<pollfd> fds{{listen_fd, POLLIN, 0}};
      {
        std::lock_guard<std::mutex> lock(mu);
        for (auto& [fd, c] : conns) fds.push_back({fd, POLLIN, 0});
      }
      if (poll(fds.data(), fds.size(), 50) <= 0) continue;
      std::lock_guard<std::mutex> lock(mu);
      if (fds[0].revents & POLLIN) {
        int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) conns[fd];
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        const int fd = fds[i].fd;
        Conn& c = conns[fd];
        uint8_t buf[65536];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        bool keep = n > 0;
        if (keep) c.in.insert(c.in.end(), buf, buf + n);
        while (keep && !c.in.empty()) {
          torch_store::Request r;
          auto d = torch_store::decode(c.in.data(), c.in.size(), &r);
          if (d.status == Decoded::kNeedMore) break;
          keep = d.status == Decoded::kDone && handle(fd, c, r);
          if (keep) c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(d.consumed));
        }
        if (!keep) {
          close(fd);
          conns.erase(fd);
        }
      }
    }
  }
};

TorchStoreServer::TorchStoreServer() : impl_(std::make_unique<Impl>()) {
  impl_->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (bind(impl_->listen_fd, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(impl_->listen_fd, 64) != 0 ||
      getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    throw std::runtime_error("TorchStoreServer: cannot listen on 127.0.0.1");
  }
  impl_->port = ntohs(a.sin_port);
  impl_->thread = std::thread([this] { impl_->loop(); });
}

TorchStoreServer::~TorchStoreServer() {
  impl_->stop = true;
  impl_->thread.join();
  for (auto& [fd, c] : impl_->conns) close(fd);
  close(impl_->listen_fd);
}

int TorchStoreServer::port() const { return impl_->port; }

std::map<std::string, Bytes> TorchStoreServer::data() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->data;
}

void TorchStoreServer::put(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->data[key] = Bytes(value.begin(), value.end());
  impl_->wake_waiters();
}

}  // namespace colony::dist::testing
