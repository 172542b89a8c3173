// TorchTCPStore against a server written to PyTorch's TCPStore protocol (torch_store_server.h,
// standing in for torchrun's agent store): every operation, blocking get and wait, a wait that
// times out and leaves the connection usable, the hello refused by a server of another protocol,
// the progress lines of a worker whose store is not up or never answers, and the bytes on the wire
// against PyTorch's protocol written out by hand.
#include "distributed/store/torch_tcp_store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "distributed/store/tcp_store.h"
#include "tests/distributed/store/raw_socket.h"
#include "tests/distributed/store/torch_store_server.h"

namespace colony::dist {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

TEST(TorchTCPStore, EveryOperationWithKeysAsPyTorchNamesThem) {
  testing::TorchStoreServer server;
  TorchTCPStore store(server.client_options());
  store.set("a", std::string("one"));
  EXPECT_EQ(store.get_string("a"), "one");
  EXPECT_EQ(store.add("n", 5), 5);
  EXPECT_EQ(store.add("n", -2), 3);
  EXPECT_TRUE(store.check({"a", "n"}));
  EXPECT_FALSE(store.check({"a", "missing"}));
  // compare_set: PyTorch's semantics (the value afterwards; `expected` back for an absent key).
  EXPECT_EQ(store.compare_set("a", bytes("one"), bytes("two")), bytes("two"));
  EXPECT_EQ(store.compare_set("a", bytes("one"), bytes("three")), bytes("two"));
  EXPECT_EQ(store.compare_set("fresh", {}, bytes("x")), bytes("x"));
  EXPECT_EQ(store.compare_set("absent", bytes("q"), bytes("x")), bytes("q"));
  EXPECT_TRUE(store.delete_key("fresh"));
  EXPECT_FALSE(store.delete_key("fresh"));
  store.wait({"a", "n"});
  // PyTorch's client puts "/" before every key; a Python store.get("a") sees Colony's value.
  const auto data = server.data();
  ASSERT_TRUE(data.count("/a"));
  EXPECT_EQ(data.at("/a"), bytes("two"));
  EXPECT_EQ(data.at("/n"), bytes("3"));
  EXPECT_FALSE(data.count("a"));
}

TEST(TorchTCPStore, GetAndWaitBlockUntilAnotherClientSetsTheKey) {
  testing::TorchStoreServer server;
  TorchTCPStore store(server.client_options());
  std::thread late([&] {
    std::this_thread::sleep_for(milliseconds(300));
    server.put("/late", "here");
  });
  const auto start = Clock::now();
  EXPECT_EQ(store.get_string("late"), "here");
  EXPECT_GE(Clock::now() - start, milliseconds(250));
  late.join();
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(200));
    TorchTCPStore other(server.client_options());
    other.set("k1", std::string("1"));
    other.set("k2", std::string("2"));
  });
  store.wait({"k1", "k2"}, std::chrono::seconds(5));
  later.join();
}

TEST(TorchTCPStore, WaitTimesOutNamingTheKeysAndTheConnectionStaysUsable) {
  testing::TorchStoreServer server;
  TorchTCPStore store(server.client_options());
  const auto start = Clock::now();
  try {
    store.wait({"never"}, milliseconds(300));
    FAIL() << "expected a TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("never"), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  store.set_timeout(milliseconds(200));
  EXPECT_THROW(store.get("never"), TimeoutError);
  // The cancelled waits left nothing in flight: the next replies are the right ones.
  EXPECT_EQ(store.add("n", 7), 7);
  store.set("k", std::string("v"));
  EXPECT_EQ(store.get_string("k"), "v");
}

TEST(TorchTCPStore, ThreadsShareTheConnection) {
  testing::TorchStoreServer server;
  TorchTCPStore store(server.client_options());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) store.add("count", 1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(store.add("count", 0), 400);
}

TEST(TorchTCPStore, AColonyStoreOnThePortIsRefusedWithAClearError) {
  TCPStoreOptions so;
  so.port = 0;
  so.is_server = true;
  so.token = "t";
  so.timeout = std::chrono::seconds(5);
  TCPStore colony_store(so);
  TorchTCPStoreOptions o;
  o.port = colony_store.port();
  o.timeout = std::chrono::seconds(2);
  try {
    TorchTCPStore store(o);
    FAIL() << "expected a StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("PyTorch's TCPStore"), std::string::npos) << e.what();
  }
}

TEST(TorchTCPStore, AWorkerWaitingForItsStoreSaysWhatItWaitsFor) {
  int port;
  {
    testing::TorchStoreServer gone;  // a port nothing listens on once it is destroyed
    port = gone.port();
  }
  std::vector<std::string> lines;
  TorchTCPStoreOptions o;
  o.port = port;
  o.timeout = milliseconds(1500);
  o.description = "torchrun's store";
  o.progress_interval = milliseconds(300);
  o.progress = [&](const std::string& line) { lines.push_back(line); };
  EXPECT_THROW(TorchTCPStore store(o), StoreError);
  ASSERT_GE(lines.size(), 2u);
  const std::string where = "torchrun's store at 127.0.0.1:" + std::to_string(port);
  for (const auto& line : lines) {
    EXPECT_NE(line.find(where), std::string::npos) << line;
    EXPECT_NE(line.find("s so far"), std::string::npos) << line;
    EXPECT_NE(line.find("s left"), std::string::npos) << line;
    EXPECT_NE(line.find("Connection refused"), std::string::npos) << line;
  }
}

// A store that accepts the connection (the kernel completes it from the listen backlog) and never
// answers, like a stopped torchrun agent: the worker waited the whole timeout without a word.
TEST(TorchTCPStore, AWorkerConnectedToASilentStoreSaysSo) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sa);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&sa), &len), 0);
  std::vector<std::string> lines;
  TorchTCPStoreOptions o;
  o.port = ntohs(sa.sin_port);
  o.timeout = milliseconds(1500);
  o.description = "torchrun's store";
  o.progress_interval = milliseconds(300);
  o.progress = [&](const std::string& line) { lines.push_back(line); };
  std::string error;
  try {
    TorchTCPStore store(o);
  } catch (const StoreError& e) {
    error = e.what();
  }
  ::close(listener);
  EXPECT_NE(error.find("torchrun's store at 127.0.0.1:" + std::to_string(o.port) +
                       " accepted the connection but did not answer PyTorch's TCPStore hello within 1500 ms"),
            std::string::npos)
      << error;
  ASSERT_GE(lines.size(), 3u);
  for (const auto& line : lines) {
    EXPECT_NE(line.find("colony: still waiting for torchrun's store at 127.0.0.1:"), std::string::npos) << line;
    EXPECT_NE(line.find("connected, no answer to PyTorch's TCPStore hello yet"), std::string::npos) << line;
  }
}

// ------------------------------------------------------------------ the bytes on the wire

// A server that accepts one connection and plays a script of exchanges: the bytes the client must
// send, compared byte for byte, and the bytes to answer. It shares no code with Colony's encoder
// or decoder, so a wrong opcode or a flipped byte order in torch_store_protocol.cc shows here.
class ScriptedServer {
 public:
  struct Exchange {
    Bytes request, reply;
  };
  explicit ScriptedServer(std::vector<Exchange> script) : script_(std::move(script)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 || ::listen(listener_, 4) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
      throw std::runtime_error("ScriptedServer: cannot listen");
    }
    port_ = ntohs(sa.sin_port);
    thread_ = std::thread([this] { play(); });
  }
  ~ScriptedServer() {
    if (thread_.joinable()) thread_.join();
    ::close(listener_);
  }
  int port() const { return port_; }
  // After the client is done: what differed, "" when every byte matched.
  std::string finish() {
    thread_.join();
    return errors_;
  }

 private:
  // Reads n bytes within 5 s; fewer when the client stopped sending.
  static Bytes read_n(int fd, size_t n) {
    Bytes got;
    uint8_t buf[4096];
    while (got.size() < n) {
      pollfd pfd{fd, POLLIN, 0};
      if (::poll(&pfd, 1, 5000) <= 0) break;
      const ssize_t k = ::recv(fd, buf, std::min(sizeof(buf), n - got.size()), 0);
      if (k <= 0) break;
      got.insert(got.end(), buf, buf + k);
    }
    return got;
  }
  void play() {
    pollfd pfd{listener_, POLLIN, 0};
    if (::poll(&pfd, 1, 5000) <= 0) {
      errors_ = "no connection";
      return;
    }
    const int fd = ::accept(listener_, nullptr, nullptr);
    for (size_t i = 0; i < script_.size(); ++i) {
      const Bytes got = read_n(fd, script_[i].request.size());
      if (got != script_[i].request) {
        errors_ = "exchange " + std::to_string(i) + ": expected " + colony::testing::to_hex(script_[i].request) + ", got " + colony::testing::to_hex(got);
        break;  // closing makes the client fail instead of waiting
      }
      if (!script_[i].reply.empty()) ::send(fd, script_[i].reply.data(), script_[i].reply.size(), MSG_NOSIGNAL);
    }
    ::close(fd);
  }

  std::vector<Exchange> script_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::string errors_;
};

// Every operation's bytes as PyTorch's client sends them (TCPStore.cpp: QueryType VALIDATE 0, SET
// 1, COMPARE_SET 2, GET 3, ADD 4, CHECK 5, WAIT 6, DELETE_KEY 8, CANCEL_WAIT 12, PING 13; strings
// as a u64 length and the bytes; integers little-endian), and PyTorch's server's answers.
TEST(TorchTCPStore, SendsTheBytesOfPyTorchsProtocol) {
  const auto pid = static_cast<uint32_t>(::getpid());
  Bytes pid_bytes;
  for (int shift : {0, 8, 16, 24}) pid_bytes.push_back(static_cast<uint8_t>(pid >> shift));
  Bytes hello = colony::testing::from_hex("00 CEF7853C 0D");
  hello.insert(hello.end(), pid_bytes.begin(), pid_bytes.end());
  ScriptedServer server({
      {hello, pid_bytes},
      {colony::testing::from_hex("01 0200000000000000 2F61 0300000000000000 6F6E65"), {}},        // set("a", "one")
      {colony::testing::from_hex("04 0200000000000000 2F6E 0500000000000000"), colony::testing::from_hex("0700000000000000")},  // add("n", 5) -> 7
      {colony::testing::from_hex("04 0200000000000000 2F6E FEFFFFFFFFFFFFFF"), colony::testing::from_hex("0001000000000000")},  // add("n", -2) -> 256
      {colony::testing::from_hex("05 0200000000000000 0200000000000000 2F61 0200000000000000 2F6E"), colony::testing::from_hex("00")},  // check -> READY
      {colony::testing::from_hex("05 0100000000000000 0200000000000000 2F78"), colony::testing::from_hex("01")},  // check({"x"}) -> NOT_READY
      {colony::testing::from_hex("06 0100000000000000 0200000000000000 2F61"), colony::testing::from_hex("00")},  // get("a"): WAIT -> STOP_WAITING
      {colony::testing::from_hex("03 0200000000000000 2F61"), colony::testing::from_hex("0300000000000000 6F6E65")},  //          GET -> "one"
      {colony::testing::from_hex("02 0200000000000000 2F61 0300000000000000 6F6E65 0300000000000000 74776F"),
       colony::testing::from_hex("0300000000000000 74776F")},  // compare_set("a", "one", "two") -> "two"
      {colony::testing::from_hex("08 0200000000000000 2F61"), colony::testing::from_hex("0100000000000000")},  // delete_key("a") -> 1 deleted
      {colony::testing::from_hex("06 0100000000000000 0200000000000000 2F77"), {}},      // wait({"w"}): no answer ...
      {colony::testing::from_hex("0C"), colony::testing::from_hex("01")},                                      // ... CANCEL_WAIT -> WAIT_CANCELED
  });
  TorchTCPStoreOptions o;
  o.port = server.port();
  o.timeout = std::chrono::seconds(5);
  std::string failure;
  try {
    TorchTCPStore store(o);
    store.set("a", std::string("one"));
    EXPECT_EQ(store.add("n", 5), 7);
    EXPECT_EQ(store.add("n", -2), 256);
    EXPECT_TRUE(store.check({"a", "n"}));
    EXPECT_FALSE(store.check({"x"}));
    EXPECT_EQ(store.get_string("a"), "one");
    EXPECT_EQ(store.compare_set("a", bytes("one"), bytes("two")), bytes("two"));
    EXPECT_TRUE(store.delete_key("a"));
    EXPECT_THROW(store.wait({"w"}, milliseconds(100)), TimeoutError);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  EXPECT_EQ(server.finish(), "");
  EXPECT_EQ(failure, "");
}

}  // namespace
}  // namespace colony::dist
