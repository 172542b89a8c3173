// The test server of PyTorch's TCPStore protocol keeps the production store's limits: it survives
// an ADD to a value that is not a number, a client that does not read, silent and surplus
// connections and bytes before VALIDATE, and backs off instead of spinning when out of descriptors.
// A test server that dies or blocks makes the tests that use it hang or crash.
#include "tests/distributed/store/torch_store_server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "distributed/store/torch_tcp_store.h"
#include "tests/distributed/store/raw_socket.h"
#include "tests/multiprocess.h"

namespace colony::dist {
namespace {

using colony::testing::closed_by_server;
using colony::testing::raw_connect;
using colony::testing::raw_send;
using std::chrono::milliseconds;
using testing::TorchStoreServer;
using testing::TorchStoreServerOptions;

// PyTorch's VALIDATE, written out: query 0, then the magic 0x3C85F7CE little-endian.
const std::vector<uint8_t> kValidate = {0x00, 0xCE, 0xF7, 0x85, 0x3C};

// The server still answers a new client: set, then get through WAIT + GET.
void expect_served(const TorchStoreServer& server, const std::string& key) {
  TorchTCPStore store(server.client_options());
  store.set(key, std::string("v"));
  EXPECT_EQ(store.get_string(key), "v");
}

// std::stoll on "abc" threw in the server's thread and ended the test binary.
TEST(TorchStoreServer, AddToAValueThatIsNotANumberClosesOnlyThatConnection) {
  TorchStoreServer server;
  TorchTCPStore store(server.client_options());
  store.set("text", std::string("abc"));
  EXPECT_THROW(store.add("text", 1), StoreError);
  TorchTCPStore other(server.client_options());
  other.set("big", std::string("9223372036854775807"));
  EXPECT_THROW(other.add("big", 1), StoreError);  // would overflow int64
  expect_served(server, "after");
  EXPECT_EQ(server.data().at("/text"), Bytes({'a', 'b', 'c'}));
}

// Blocking sends stalled the server's one thread as soon as a client stopped reading its replies.
TEST(TorchStoreServer, AClientThatDoesNotReadDoesNotHoldUpTheOthers) {
  TorchStoreServer server;
  server.put("/big", std::string(256 << 10, 'x'));
  const int s = raw_connect(server.port());
  ASSERT_GE(s, 0);
  std::vector<uint8_t> request = kValidate;
  const std::vector<uint8_t> get_big = {0x03, 0x04, 0, 0, 0, 0, 0, 0, 0, '/', 'b', 'i', 'g'};
  // 100 GETs of 256 KiB: 25 MiB of replies, more than the socket buffers hold.
  for (int i = 0; i < 100; ++i) request.insert(request.end(), get_big.begin(), get_big.end());
  raw_send(s, request);
  std::this_thread::sleep_for(milliseconds(200));
  expect_served(server, "meanwhile");
  close(s);
}

TEST(TorchStoreServer, AConnectionThatDoesNotValidateIsClosed) {
  TorchStoreServerOptions o;
  o.hello_timeout = milliseconds(300);
  TorchStoreServer server(o);
  const int silent = raw_connect(server.port());
  const int partial = raw_connect(server.port());
  raw_send(partial, {0x00, 0xCE});
  const int other_query = raw_connect(server.port());  // SET before VALIDATE
  raw_send(other_query, {0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 'k', 0x01, 0, 0, 0, 0, 0, 0, 0, 'v'});
  const int wrong_magic = raw_connect(server.port());
  raw_send(wrong_magic, {0x00, 0x3C, 0x85, 0xF7, 0xCE});
  const auto start = std::chrono::steady_clock::now();
  for (int s : {silent, partial, other_query, wrong_magic}) {
    EXPECT_TRUE(closed_by_server(s));
    close(s);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  // A validated client idle for longer than that keeps its connection.
  TorchTCPStore good(server.client_options());
  std::this_thread::sleep_for(milliseconds(600));
  good.set("k", std::string("v"));
  EXPECT_EQ(good.get_string("k"), "v");
}

// True when the connection is still open after 200 ms.
bool still_open(int s) {
  pollfd pfd{s, POLLIN, 0};
  char c;
  return poll(&pfd, 1, 200) == 0 || recv(s, &c, 1, MSG_DONTWAIT) > 0;
}

TEST(TorchStoreServer, ConnectionsOverTheCapsAreClosed) {
  TorchStoreServerOptions o;
  o.max_connections = 4;
  o.max_unauthenticated = 2;
  o.hello_timeout = std::chrono::seconds(60);
  TorchStoreServer server(o);
  TorchTCPStore good(server.client_options());
  // Two silent connections fill the places to validate in; a third evicts the oldest.
  const int first = raw_connect(server.port());
  std::this_thread::sleep_for(milliseconds(50));
  const int second = raw_connect(server.port());
  std::this_thread::sleep_for(milliseconds(50));
  const int third = raw_connect(server.port());
  EXPECT_TRUE(closed_by_server(first));
  EXPECT_TRUE(still_open(second));
  raw_send(second, kValidate);
  raw_send(third, kValidate);
  std::this_thread::sleep_for(milliseconds(100));
  // good, second, third and a fourth make 4: the next is closed at once.
  const int fourth = raw_connect(server.port());
  std::this_thread::sleep_for(milliseconds(100));
  const int surplus = raw_connect(server.port());
  EXPECT_TRUE(closed_by_server(surplus));
  EXPECT_TRUE(still_open(fourth));
  good.set("k", std::string("v"));
  EXPECT_EQ(good.get_string("k"), "v");
  for (int s : {first, second, third, fourth, surplus}) close(s);
  std::this_thread::sleep_for(milliseconds(100));
  expect_served(server, "later");
}

TEST(TorchStoreServer, OutOfFileDescriptorsItBacksOffInsteadOfSpinning) {
  // In a fresh process: the test lowers its descriptor limit.
  auto results = colony::testing::run_ranks(1, [](int) {
    TorchStoreServer server;
    TorchTCPStore good(server.client_options());
    EXPECT_LT(colony::testing::cpu_seconds_while_out_of_descriptors(server.port()), 0.2)
        << "CPU seconds in 1 s while out of descriptors (spinning uses ~1)";
    good.set("k", std::string("v"));
    EXPECT_EQ(good.get_string("k"), "v");
    expect_served(server, "late");
  });
  EXPECT_TRUE(colony::testing::all_succeeded(results));
}

}  // namespace
}  // namespace colony::dist
