#include "distributed/store/torch_tcp_store.h"

#include <unistd.h>

#include <mutex>
#include <stdexcept>

#include "distributed/store/torch_store_protocol.h"

namespace colony::dist {
namespace {

using std::chrono::milliseconds;
using torch_store::Query;
using torch_store::Request;

// A server that answers nothing else still answers a cancelled wait promptly; past this margin
// it is taken for gone.
constexpr milliseconds kReplyMargin{5000};

std::string keys_text(const std::vector<std::string>& keys) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

void check_key(const std::string& key) {
  if (key.size() + 1 > torch_store::kMaxKey) throw std::invalid_argument("TorchTCPStore: key longer than 4095 bytes");
}
void check_value(const Bytes& v) {
  if (v.size() > torch_store::kMaxValue) throw std::invalid_argument("TorchTCPStore: value larger than 64 MiB");
}

}  // namespace

struct TorchTCPStore::Impl {
  TorchTCPStoreOptions options;
  std::unique_ptr<StoreSocket> socket;
  std::mutex mu;

  StoreError malformed() const {
    return StoreError("TorchTCPStore: malformed reply from " + options.description + " at " + socket->where());
  }

  void send(Request r) {
    for (auto& k : r.keys) k = "/" + k;
    socket->send_all(torch_store::encode(r));
  }
  uint8_t recv_u8(milliseconds limit) {
    uint8_t v;
    socket->recv_exact(&v, 1, limit);
    return v;
  }
  int64_t recv_i64(milliseconds limit) {
    uint8_t b[8];
    socket->recv_exact(b, 8, limit);
    return static_cast<int64_t>(torch_store::read_u64(b));
  }
  Bytes recv_bytes(milliseconds limit) {
    uint8_t b[8];
    socket->recv_exact(b, 8, limit);
    const uint64_t len = torch_store::read_u64(b);
    if (len > torch_store::kMaxValue) throw malformed();
    Bytes out(static_cast<size_t>(len));
    if (len) socket->recv_exact(out.data(), out.size(), limit);
    return out;
  }

  // Sent together, VALIDATE and PING: PyTorch's server answers the PING with the pid it carries.
  // Its silence is reported every progress_interval, as Colony's own client does (a stopped agent
  // would otherwise leave the worker quiet for the whole timeout, 10 minutes by default).
  void hello(const StoreConnectOptions& c) {
    Request v;
    v.query = Query::kValidate;
    v.number = torch_store::kValidationMagic;
    Request ping;
    ping.query = Query::kPing;
    ping.number = static_cast<uint32_t>(getpid());
    Bytes b = torch_store::encode(v);
    Bytes p = torch_store::encode(ping);
    b.insert(b.end(), p.begin(), p.end());
    socket->send_all(b);
    if (!socket->wait_for_answer(c, "connected, no answer to PyTorch's TCPStore hello yet")) {
      throw StoreError("TorchTCPStore: " + options.description + " at " + socket->where() +
                       " accepted the connection but did not answer PyTorch's TCPStore hello within " +
                       std::to_string(options.timeout.count()) +
                       " ms (is its process stopped, or MASTER_PORT not a PyTorch TCPStore?)");
    }
    uint8_t reply[4];
    try {
      socket->recv_exact(reply, 4, kReplyMargin);
    } catch (const StoreError& e) {
      throw StoreError(std::string(e.what()) + " during the hello; is it PyTorch's TCPStore?");
    }
    uint32_t echoed = 0;
    for (int i = 0; i < 4; ++i) echoed |= static_cast<uint32_t>(reply[i]) << (8 * i);
    if (echoed != ping.number) {
      throw StoreError("TorchTCPStore: " + options.description + " at " + socket->where() +
                       " did not answer PyTorch's TCPStore hello (is MASTER_PORT a PyTorch TCPStore?)");
    }
  }

  // WAIT for `keys` up to `timeout`; TimeoutError (after cancelling the wait) when they never came.
  void wait(const std::vector<std::string>& keys, milliseconds timeout, const char* what) {
    Request r;
    r.query = Query::kWait;
    r.keys = keys;
    send(r);
    if (socket->wait_readable(timeout)) {
      if (recv_u8(kReplyMargin) != torch_store::kStopWaiting) throw malformed();
      return;
    }
    Request cancel;
    cancel.query = Query::kCancelWait;
    send(cancel);
    uint8_t reply = recv_u8(kReplyMargin);
    if (reply == torch_store::kStopWaiting) reply = recv_u8(kReplyMargin);  // the keys came as we gave up
    if (reply != torch_store::kWaitCanceled) throw malformed();
    throw TimeoutError(std::string("TorchTCPStore: ") + what + " timed out after " + std::to_string(timeout.count()) +
                       " ms waiting for key(s) " + keys_text(keys) + " at " + options.description + " " +
                       socket->where());
  }
};

TorchTCPStore::TorchTCPStore(TorchTCPStoreOptions options) : Store(options.timeout), impl_(std::make_unique<Impl>()) {
  if (options.port <= 0 || options.port > 65535)
    throw std::invalid_argument("TorchTCPStore: port " + std::to_string(options.port) + " is not in 1..65535");
  impl_->options = options;
  StoreConnectOptions c;
  c.host = options.host;
  c.port = options.port;
  c.timeout = options.timeout;
  c.description = options.description;
  c.progress_interval = options.progress_interval;
  c.progress = options.progress;
  impl_->socket = std::make_unique<StoreSocket>(c);
  impl_->hello(c);
}

TorchTCPStore::~TorchTCPStore() = default;

const std::string& TorchTCPStore::where() const { return impl_->socket->where(); }

void TorchTCPStore::set(const std::string& key, const Bytes& value) {
  check_key(key);
  check_value(value);
  Request r;
  r.query = Query::kSet;
  r.keys = {key};
  r.values = {value};
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(r);
}

Bytes TorchTCPStore::get(const std::string& key) {
  check_key(key);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->wait({key}, timeout_, "get");
  Request r;
  r.query = Query::kGet;
  r.keys = {key};
  impl_->send(r);
  return impl_->recv_bytes(kReplyMargin);
}

int64_t TorchTCPStore::add(const std::string& key, int64_t delta) {
  check_key(key);
  Request r;
  r.query = Query::kAdd;
  r.keys = {key};
  r.delta = delta;
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(r);
  return impl_->recv_i64(kReplyMargin);
}

Bytes TorchTCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  check_key(key);
  check_value(expected);
  check_value(desired);
  Request r;
  r.query = Query::kCompareSet;
  r.keys = {key};
  r.values = {expected, desired};
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(r);
  return impl_->recv_bytes(kReplyMargin);
}

void TorchTCPStore::wait(const std::vector<std::string>& keys, milliseconds timeout) {
  if (keys.size() > torch_store::kMaxKeys) throw std::invalid_argument("TorchTCPStore: wait on more than 1024 keys");
  for (const auto& k : keys) check_key(k);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->wait(keys, timeout, "wait");
}

bool TorchTCPStore::check(const std::vector<std::string>& keys) {
  if (keys.size() > torch_store::kMaxKeys) throw std::invalid_argument("TorchTCPStore: check of more than 1024 keys");
  for (const auto& k : keys) check_key(k);
  Request r;
  r.query = Query::kCheck;
  r.keys = keys;
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(r);
  const uint8_t reply = impl_->recv_u8(kReplyMargin);
  if (reply != torch_store::kReady && reply != torch_store::kNotReady) throw impl_->malformed();
  return reply == torch_store::kReady;
}

bool TorchTCPStore::delete_key(const std::string& key) {
  check_key(key);
  Request r;
  r.query = Query::kDeleteKey;
  r.keys = {key};
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(r);
  return impl_->recv_i64(kReplyMargin) == 1;
}

}  // namespace colony::dist
