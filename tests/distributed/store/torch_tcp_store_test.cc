// TorchTCPStore against a server written to PyTorch's TCPStore protocol (torch_store_server.h,
// standing in for torchrun's agent store): every operation, blocking get and wait, a wait that
// times out and leaves the connection usable, the hello refused by a server of another protocol,
// and the progress lines of a worker whose store never answers.
#include "distributed/store/torch_tcp_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "distributed/store/tcp_store.h"
#include "tests/distributed/store/torch_store_server.h"

namespace colony::dist {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

TorchTCPStoreOptions client_of(const testing::TorchStoreServer& server) {
  TorchTCPStoreOptions o;
  o.port = server.port();
  o.timeout = std::chrono::seconds(5);
  return o;
}

Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

TEST(TorchTCPStore, EveryOperationWithKeysAsPyTorchNamesThem) {
  testing::TorchStoreServer server;
  TorchTCPStore store(client_of(server));
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
  TorchTCPStore store(client_of(server));
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
    TorchTCPStore other(client_of(server));
    other.set("k1", std::string("1"));
    other.set("k2", std::string("2"));
  });
  store.wait({"k1", "k2"}, std::chrono::seconds(5));
  later.join();
}

TEST(TorchTCPStore, WaitTimesOutNamingTheKeysAndTheConnectionStaysUsable) {
  testing::TorchStoreServer server;
  TorchTCPStore store(client_of(server));
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
  TorchTCPStore store(client_of(server));
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

}  // namespace
}  // namespace colony::dist
