// TCPStore: every operation across real processes and threads, timeouts, connection retry,
// the job token, and a server that survives garbage, oversized and half-sent messages, silent
// and surplus connections, floods of bytes before the hello, and running out of descriptors;
// its descriptors are close-on-exec; a client says what it waits for.
#include "distributed/store/tcp_store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <limits>
#include <thread>
#include <vector>

#include "tests/descriptors.h"
#include "tests/distributed/store/raw_socket.h"
#include "tests/multiprocess.h"
#include "tests/test_util.h"

namespace colony::dist {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using testing::closed_by_server;
using testing::raw_connect;
using testing::raw_send;

TCPStoreOptions from_env(int rank) {
  TCPStoreOptions o;
  o.host = "127.0.0.1";
  o.port = std::atoi(std::getenv("MASTER_PORT"));
  o.is_server = rank == 0;
  o.timeout = std::chrono::seconds(10);
  return o;
}

// A server on a free port in this process, with token "t".
TCPStoreOptions server_options() {
  TCPStoreOptions o;
  o.port = 0;
  o.is_server = true;
  o.token = "t";
  o.timeout = std::chrono::seconds(5);
  return o;
}

TCPStoreOptions client_of(const TCPStore& server) {
  TCPStoreOptions o;
  o.port = server.port();
  o.token = "t";
  o.timeout = std::chrono::seconds(5);
  return o;
}

// ------------------------------------------------------------------ raw sockets for bad clients

void append_u32(std::vector<uint8_t>& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

std::vector<uint8_t> good_hello() {
  std::vector<uint8_t> b{'C', 'L', 'N', 'Y'};
  append_u32(b, 1);
  append_u32(b, 1);
  b.push_back('t');
  return b;
}


// ------------------------------------------------------------------ tests

TEST(TCPStore, EveryOperationAcrossProcesses) {
  auto results = testing::run_ranks(3, [](int rank) {
    TCPStore store(from_env(rank));
    store.set("k" + std::to_string(rank), std::to_string(rank * 10));
    // get blocks until the other ranks have set their keys.
    for (int r = 0; r < 3; ++r) EXPECT_EQ(store.get_string("k" + std::to_string(r)), std::to_string(r * 10));
    for (int i = 0; i < 50; ++i) store.add("counter", 1);
    store.wait({"k0", "k1", "k2"});
    EXPECT_TRUE(store.check({"k0", "k1", "k2"}));
    // Exactly one rank wins the compare_set; all see the winner's value.
    Bytes mine{static_cast<uint8_t>('0' + rank)};
    Bytes now = store.compare_set("leader", {}, mine);
    store.add("done", 1);
    while (store.add("done", 0) < 3) std::this_thread::sleep_for(milliseconds(5));
    EXPECT_EQ(store.add("counter", 0), 150);
    EXPECT_EQ(store.get("leader"), now);
    store.add("read", 1);
    while (store.add("read", 0) < 3) std::this_thread::sleep_for(milliseconds(5));
    // Once everyone has read, the winner deletes the key; the host keeps serving until it has.
    if (now == mine) {
      EXPECT_TRUE(store.delete_key("leader"));
      store.set("deleted", Bytes{});
    }
    store.wait({"deleted"});
    EXPECT_FALSE(store.check({"leader"}));
    store.add("finished", 1);
    if (rank == 0)
      while (store.add("finished", 0) < 3) std::this_thread::sleep_for(milliseconds(5));
  });
  if (testing::in_rank_child()) return;
  EXPECT_TRUE(testing::all_succeeded(results));
}

TEST(TCPStore, SingleProcessOperationsAndTimeoutsNameTheMissingKey) {
  TCPStore store(server_options());
  EXPECT_TRUE(store.is_server());
  EXPECT_GT(store.port(), 0);
  store.set_timeout(milliseconds(200));
  EXPECT_TRUE(testing::throws_with<TimeoutError>([&] { store.get("absent"); }, "absent"));
  EXPECT_TRUE(testing::throws_with<TimeoutError>([&] { store.wait({"a", "b"}, milliseconds(100)); }, "a, b"));
  store.set("a", std::string("1"));
  EXPECT_TRUE(store.check({"a"}));
  EXPECT_FALSE(store.check({"a", "b"}));
  EXPECT_EQ(store.compare_set("a", Bytes{'1'}, Bytes{'2'}), Bytes{'2'});
  EXPECT_EQ(store.compare_set("a", Bytes{'9'}, Bytes{'3'}), Bytes{'2'});
  EXPECT_EQ(store.compare_set("new", {}, Bytes{'x'}), Bytes{'x'});
  EXPECT_TRUE(store.delete_key("a"));
  EXPECT_FALSE(store.delete_key("a"));
  EXPECT_EQ(store.add("n", 5), 5);
  EXPECT_EQ(store.add("n", -7), -2);
  // Empty and binary values round-trip; set overwrites.
  store.set("empty", Bytes{});
  EXPECT_EQ(store.get("empty"), Bytes{});
  Bytes binary{0, 255, 10, 0, 13};
  store.set("bin", binary);
  EXPECT_EQ(store.get("bin"), binary);
  store.set("bin", std::string("over"));
  EXPECT_EQ(store.get_string("bin"), "over");
  // A value of 1 MiB.
  Bytes big(1 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 31);
  store.set("big", big);
  EXPECT_EQ(store.get("big"), big);
  // add on a value that is not a number is an error, not a crash; the store goes on.
  EXPECT_TRUE(testing::throws_with<StoreError>([&] { store.add("bin", 1); }, "not a decimal integer"));
  EXPECT_EQ(store.add("n", 0), -2);
  // A counter that would overflow int64 is refused and kept (it was undefined behaviour on the server).
  store.add("huge_counter", std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(testing::throws_with<StoreError>([&] { store.add("huge_counter", 1); },
                                               "would overflow its int64 counter"));
  EXPECT_TRUE(testing::throws_with<StoreError>([&] { store.add("n", std::numeric_limits<int64_t>::min()); },
                                               "would overflow"));
  EXPECT_EQ(store.add("huge_counter", 0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(store.add("huge_counter", -1), std::numeric_limits<int64_t>::max() - 1);
  // Client-side limits are explained.
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([&] { store.set(std::string(5000, 'k'), Bytes{}); },
                                                          "key longer than 4096"));
}

TEST(TCPStore, BlockedGetWakesWhenAnotherClientSets) {
  TCPStore server(server_options());
  std::thread setter([&] {
    TCPStore other(client_of(server));
    std::this_thread::sleep_for(milliseconds(200));
    other.set("late", std::string("here"));
  });
  const auto start = Clock::now();
  EXPECT_EQ(server.get_string("late"), "here");
  EXPECT_GE(Clock::now() - start, milliseconds(150));
  setter.join();
}

TEST(TCPStore, ConcurrentClientsAndThreadsCountExactly) {
  TCPStore server(server_options());
  constexpr int kClients = 6, kThreadsPerClient = 3, kAdds = 200;
  std::vector<std::unique_ptr<TCPStore>> clients;
  for (int c = 0; c < kClients; ++c) clients.push_back(std::make_unique<TCPStore>(client_of(server)));
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int c = 0; c < kClients; ++c) {
    for (int t = 0; t < kThreadsPerClient; ++t) {
      threads.emplace_back([&, c, t] {
        try {
          // Threads of one client share its connection; blocking gets interleave with adds.
          for (int i = 0; i < kAdds; ++i) clients[c]->add("total", 1);
          const std::string key = "c" + std::to_string(c) + "t" + std::to_string(t);
          clients[c]->set(key, key);
          if (clients[c]->get_string(key) != key) errors++;
        } catch (const std::exception&) {
          errors++;
        }
      });
    }
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(server.add("total", 0), kClients * kThreadsPerClient * kAdds);
}

TEST(TCPStore, ClientRetriesUntilTheServerAppears) {
  // Reserve a free port, release it, and start the server there only after the client has begun.
  int port;
  {
    TCPStore probe(server_options());
    port = probe.port();
  }
  std::thread late_server([port] {
    std::this_thread::sleep_for(milliseconds(300));
    TCPStoreOptions o = server_options();
    o.port = port;
    TCPStore server(o);
    server.wait({"client-was-here"}, std::chrono::seconds(5));
  });
  TCPStoreOptions c;
  c.port = port;
  c.token = "t";
  c.timeout = std::chrono::seconds(5);
  TCPStore client(c);
  client.set("client-was-here", Bytes{});
  late_server.join();
}

TEST(TCPStore, NoServerGivesAnErrorNamingTheAddressAfterTheTimeout) {
  int port;
  {
    TCPStore probe(server_options());
    port = probe.port();
  }
  TCPStoreOptions c;
  c.port = port;
  c.timeout = milliseconds(300);
  EXPECT_TRUE(testing::throws_with<StoreError>([&] { TCPStore client(c); },
                                               "127.0.0.1:" + std::to_string(port) + " within 300 ms"));
}

TEST(TCPStore, ClientOfAStoreThatWentAwaySaysSo) {
  auto server = std::make_unique<TCPStore>(server_options());
  TCPStore client(client_of(*server));
  client.set("x", Bytes{1});
  server.reset();
  EXPECT_TRUE(testing::throws_with<StoreError>([&] { client.get("x"); }, "lost connection"));
}

TEST(TCPStore, WrongTokenIsRefusedAndPortInUseSuggestsPortZero) {
  TCPStore server(server_options());
  TCPStoreOptions c = client_of(server);
  c.token = "wrong";
  EXPECT_TRUE(testing::throws_with<StoreError>([&] { TCPStore bad(c); }, "refused this process's job token"));
  TCPStoreOptions again = server_options();
  again.port = server.port();
  EXPECT_TRUE(testing::throws_with<StoreError>(
      [&] { TCPStore twice(again); }, "127.0.0.1:" + std::to_string(server.port())));
  EXPECT_TRUE(testing::throws_with<StoreError>([&] { TCPStore twice(again); }, "--master_port=0"));
  // The server still serves a good client.
  TCPStore good(client_of(server));
  good.set("ok", Bytes{1});
  EXPECT_EQ(server.get("ok"), Bytes{1});
}

TEST(TCPStore, GarbageOversizedAndHalfSentMessagesCloseOnlyThatConnection) {
  TCPStore server(server_options());
  TCPStore good(client_of(server));
  good.set("before", Bytes{7});

  // 1. Random bytes instead of a hello.
  {
    int s = raw_connect(server.port());
    ASSERT_GE(s, 0);
    std::vector<uint8_t> junk;
    for (int i = 0; i < 4096; ++i) junk.push_back(static_cast<uint8_t>(i * 73 + 11));
    raw_send(s, junk);
    EXPECT_TRUE(closed_by_server(s));
    close(s);
  }
  // 2. A command without the hello (right bytes, no token): refused.
  {
    int s = raw_connect(server.port());
    std::vector<uint8_t> b{1};  // set
    append_u32(b, 1);
    b.push_back('k');
    append_u32(b, 0);
    raw_send(s, b);
    EXPECT_TRUE(closed_by_server(s));
    close(s);
  }
  // 3. After a good hello: a value length of 4 GiB - 1 (far over the 64 MiB cap).
  {
    int s = raw_connect(server.port());
    raw_send(s, good_hello());
    std::vector<uint8_t> b{1};
    append_u32(b, 1);
    b.push_back('k');
    append_u32(b, 0xffffffffu);
    b.resize(b.size() + 1000, 0);
    raw_send(s, b);
    EXPECT_TRUE(closed_by_server(s));
    close(s);
  }
  // 4. An unknown command.
  {
    int s = raw_connect(server.port());
    raw_send(s, good_hello());
    raw_send(s, {200, 0, 0, 0, 0});
    EXPECT_TRUE(closed_by_server(s));
    close(s);
  }
  // 5. A wait on more keys than allowed.
  {
    int s = raw_connect(server.port());
    raw_send(s, good_hello());
    std::vector<uint8_t> b{5};  // wait
    append_u32(b, 1u << 30);
    raw_send(s, b);
    EXPECT_TRUE(closed_by_server(s));
    close(s);
  }
  // 6. Half a message, then the client vanishes; and a client that connects and says nothing.
  int silent = raw_connect(server.port());
  {
    int s = raw_connect(server.port());
    raw_send(s, good_hello());
    raw_send(s, {1, 10, 0, 0, 0, 'a', 'b'});
    close(s);
  }
  // 7. A hello with the right magic but another protocol version.
  {
    int s = raw_connect(server.port());
    std::vector<uint8_t> b{'C', 'L', 'N', 'Y'};
    append_u32(b, 99);
    append_u32(b, 1);
    b.push_back('t');
    raw_send(s, b);
    EXPECT_TRUE(closed_by_server(s));
    close(s);
  }

  // Everyone else was served throughout: the good client's connection still works, and new
  // clients still connect, while the silent one holds its connection open.
  EXPECT_EQ(good.get("before"), Bytes{7});
  good.set("after", Bytes{8});
  TCPStore fresh(client_of(server));
  EXPECT_EQ(fresh.get("after"), Bytes{8});
  EXPECT_FALSE(fresh.check({"k"}));
  close(silent);
}

// ------------------------------------------------------------------ limits on unauthenticated clients

TEST(TCPStore, AConnectionThatNeverSaysHelloIsClosedAfterTheHelloTimeout) {
  TCPStoreOptions so = server_options();
  so.hello_timeout = milliseconds(300);
  TCPStore server(so);
  int silent = raw_connect(server.port());
  int partial = raw_connect(server.port());
  raw_send(partial, {'C', 'L', 'N'});
  const auto start = Clock::now();
  EXPECT_TRUE(closed_by_server(silent));
  EXPECT_TRUE(closed_by_server(partial));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  close(silent);
  close(partial);
  // An authenticated client idle for longer than that keeps its connection.
  TCPStore good(client_of(server));
  std::this_thread::sleep_for(milliseconds(600));
  good.set("k", Bytes{1});
  EXPECT_EQ(good.get("k"), Bytes{1});
}

TEST(TCPStore, ConnectionsOverTheCapAreClosedAtOnceAndTheOthersKeepWorking) {
  TCPStoreOptions so = server_options();
  so.max_connections = 4;  // the server's own client holds one
  TCPStore server(so);
  TCPStore good(client_of(server));
  std::vector<int> held{raw_connect(server.port()), raw_connect(server.port())};
  for (int s : held) raw_send(s, good_hello());
  int surplus = raw_connect(server.port());
  EXPECT_TRUE(closed_by_server(surplus));
  close(surplus);
  good.set("k", Bytes{2});
  EXPECT_EQ(good.get("k"), Bytes{2});
  for (int s : held) close(s);
  // Once connections leave, new clients get in again.
  TCPStoreOptions c = client_of(server);
  TCPStore later(c);
  EXPECT_EQ(later.get("k"), Bytes{2});
}

TEST(TCPStore, AFloodOfSilentConnectionsCannotLockOutTheJob) {
  TCPStoreOptions so = server_options();
  so.max_unauthenticated = 4;
  so.hello_timeout = std::chrono::seconds(60);
  TCPStore server(so);
  std::vector<int> silent;
  for (int i = 0; i < 20; ++i) silent.push_back(raw_connect(server.port()));
  std::this_thread::sleep_for(milliseconds(200));
  // A rank arriving now gets in (the oldest silent connection makes room) and is served.
  TCPStore rank(client_of(server));
  rank.set("k", Bytes{3});
  EXPECT_EQ(rank.get("k"), Bytes{3});
  int closed = 0;
  for (int s : silent) {
    pollfd pfd{s, POLLIN, 0};
    char c;
    if (poll(&pfd, 1, 0) > 0 && recv(s, &c, 1, MSG_DONTWAIT) <= 0) ++closed;
    close(s);
  }
  EXPECT_GE(closed, 16);
}

// Peak resident memory of this process, in KiB.
long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(TCPStore, BytesBeforeTheHelloAreNotBuffered) {
  // In a fresh process, so the peak memory is this test's own.
  auto results = colony::testing::run_ranks(1, [](int) {
    TCPStore server(server_options());
    const long before = peak_rss_kib();
    int s = raw_connect(server.port());
    // A hello whose token runs on: 32 MiB that the server used to read whole before parsing.
    std::vector<uint8_t> start{'C', 'L', 'N', 'Y'};
    append_u32(start, 1);
    append_u32(start, 4096);
    raw_send(s, start);
    std::vector<uint8_t> chunk(1 << 20, 'x');
    for (int i = 0; i < 32; ++i)
      if (send(s, chunk.data(), chunk.size(), MSG_NOSIGNAL) < 0) break;
    close(s);
    std::this_thread::sleep_for(milliseconds(200));
    EXPECT_LT(peak_rss_kib() - before, 8 * 1024) << "KiB more at peak";
    TCPStore good(client_of(server));
    good.set("k", Bytes{4});
    EXPECT_EQ(good.get("k"), Bytes{4});
  });
  EXPECT_TRUE(colony::testing::all_succeeded(results));
}


TEST(TCPStore, OutOfFileDescriptorsTheServerBacksOffAndRecovers) {
  // In a fresh process: the test lowers its descriptor limit.
  auto results = colony::testing::run_ranks(1, [](int) {
    TCPStore server(server_options());
    TCPStore good(client_of(server));
    EXPECT_LT(colony::testing::cpu_seconds_while_out_of_descriptors(server.port()), 0.2)
        << "CPU seconds in 1 s while out of descriptors (spinning uses ~1)";
    // The job kept its store: the connected client is served, and new clients get in.
    good.set("k", Bytes{5});
    EXPECT_EQ(good.get("k"), Bytes{5});
    TCPStore late(client_of(server));
    EXPECT_EQ(late.get("k"), Bytes{5});
  });
  EXPECT_TRUE(colony::testing::all_succeeded(results));
}

// ------------------------------------------------------------------ close-on-exec

TEST(TCPStore, ItsSocketsAndPipesDoNotLeakIntoSpawnedPrograms) {
  const std::string before = colony::testing::sockets_and_pipes_a_child_inherits();
  TCPStore server(server_options());
  TCPStore client(client_of(server));
  client.set("k", Bytes{1});
  EXPECT_EQ(colony::testing::sockets_and_pipes_a_child_inherits(), before);
}

// ------------------------------------------------------------------ saying what a client waits for

TEST(TCPStore, AClientWaitingForItsStoreSaysWhatItWaitsForEveryFewSeconds) {
  const int port = colony::testing::free_port();
  std::vector<std::string> lines;
  TCPStoreOptions o;
  o.port = port;
  o.token = "t";
  o.timeout = milliseconds(1500);
  o.description = "the job's store (hosted by rank 0)";
  o.progress_interval = milliseconds(300);
  o.progress = [&](const std::string& line) { lines.push_back(line); };
  EXPECT_TRUE(testing::throws_with<StoreError>([&] { TCPStore c(o); }, "could not connect"));
  ASSERT_GE(lines.size(), 2u);
  for (const auto& line : lines) {
    EXPECT_NE(line.find("the job's store (hosted by rank 0) at 127.0.0.1:" + std::to_string(port)), std::string::npos)
        << line;
    EXPECT_NE(line.find("s so far"), std::string::npos) << line;
    EXPECT_NE(line.find("s left"), std::string::npos) << line;
  }
}

TEST(TCPStore, AStoreThatAcceptsButNeverAnswersIsReportedAndNamed) {
  // A listening socket nobody serves: the kernel accepts, nothing answers the hello.
  int l = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  ASSERT_EQ(bind(l, reinterpret_cast<sockaddr*>(&a), len), 0);
  ASSERT_EQ(listen(l, 8), 0);
  getsockname(l, reinterpret_cast<sockaddr*>(&a), &len);
  std::vector<std::string> lines;
  TCPStoreOptions o;
  o.port = ntohs(a.sin_port);
  o.token = "t";
  o.timeout = milliseconds(1500);
  o.progress_interval = milliseconds(300);
  o.progress = [&](const std::string& line) { lines.push_back(line); };
  EXPECT_TRUE(testing::throws_with<StoreError>([&] { TCPStore c(o); }, "did not answer"));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_NE(lines[0].find("no answer to the hello yet"), std::string::npos) << lines[0];
  close(l);
}

}  // namespace
}  // namespace colony::dist
