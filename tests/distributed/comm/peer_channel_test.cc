// The peer channel (distributed/comm/peer_channel.h) on its own: ranks as
// threads of this process, meeting through a TCPStore, over real sockets on 127.0.0.1.
#include "distributed/comm/peer_channel.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "distributed/store/tcp_store.h"
#include "tests/test_util.h"

namespace colony::dist::comm_detail {
namespace {

using std::chrono::milliseconds;
using Clock = PeerChannel::Clock;

constexpr size_t kCapacity = 1 << 20;

class PeerChannelTest : public ::testing::Test {
 protected:
  void SetUp() override { start_store(); }

  void start_store() {
    TCPStoreOptions o;
    o.port = 0;
    o.is_server = true;
    o.timeout = milliseconds(10000);
    o.token = "channel-test";
    server_ = std::make_unique<TCPStore>(o);
  }

  std::unique_ptr<TCPStore> client() {
    TCPStoreOptions o;
    o.port = server_->port();
    o.timeout = milliseconds(10000);
    o.token = "channel-test";
    return std::make_unique<TCPStore>(o);
  }

  static sockaddr_storage loopback(socklen_t* len) {
    sockaddr_storage a{};
    auto& in = reinterpret_cast<sockaddr_in&>(a);
    in.sin_family = AF_INET;
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    *len = sizeof(sockaddr_in);
    return a;
  }

  // Builds the channels of a `world`-rank group, each on its own thread (construction blocks
  // until every rank is connected). Ranks in `tcp_only` offer no shared memory.
  std::vector<std::unique_ptr<PeerChannel>> make_group(int world, std::vector<int> tcp_only = {}) {
    std::vector<std::unique_ptr<PeerChannel>> channels(world);
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r)
      threads.emplace_back([&, r] {
        auto store = client();
        socklen_t len = 0;
        const sockaddr_storage addr = loopback(&len);
        const bool shm = std::find(tcp_only.begin(), tcp_only.end(), r) == tcp_only.end();
        channels[r] =
            std::make_unique<PeerChannel>(*store, r, world, addr, len, kCapacity, milliseconds(10000), shm);
      });
    for (auto& t : threads) t.join();
    return channels;
  }

  // Channels this test creates afresh each time (a TCPStore's keys are for one group only).
  std::vector<std::unique_ptr<PeerChannel>> fresh_group(int world, std::vector<int> tcp_only = {}) {
    start_store();
    return make_group(world, std::move(tcp_only));
  }

  std::unique_ptr<TCPStore> server_;
};

// Each rank sends a message of a size of its own (1 byte to the whole capacity), repeatedly; every
// rank sees every peer's k-th message in its k-th exchange, whoever is ahead.
void exchange_in_order(std::vector<std::unique_ptr<PeerChannel>>& channels) {
  const int world = static_cast<int>(channels.size());
  const std::vector<size_t> sizes = {1, 48, 70000, kCapacity};
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      PeerChannel& ch = *channels[r];
      for (int round = 0; round < 40; ++round) {
        const size_t bytes = sizes[(round + r) % sizes.size()];
        std::memset(ch.outgoing(), 0, bytes);
        std::memcpy(ch.outgoing(), &round, sizeof(int) <= bytes ? sizeof(int) : 0);
        ch.outgoing()[bytes - 1] = static_cast<uint8_t>(r * 16 + round % 16);
        if (round % 7 == r) std::this_thread::sleep_for(milliseconds(3));  // someone is late
        auto messages = ch.exchange(bytes, Clock::now() + milliseconds(10000), /*poll_first=*/round % 2 == 0);
        for (int p = 0; p < world; ++p) {
          const size_t their = sizes[(round + p) % sizes.size()];
          int their_round = round;
          if (their >= sizeof(int)) std::memcpy(&their_round, messages[p], sizeof(int));
          if (their_round != round || messages[p][their - 1] != static_cast<uint8_t>(p * 16 + round % 16))
            wrong.fetch_add(1);
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(PeerChannelTest, EveryRankGetsEveryPeersMessageInOrderThroughSharedMemory) {
  auto channels = make_group(3);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(channels[r]->shared_memory_peers(), 2) << "rank " << r;
  exchange_in_order(channels);
}

TEST_F(PeerChannelTest, EveryRankGetsEveryPeersMessageInOrderOverTcp) {
  auto channels = make_group(3, {0, 1, 2});
  for (int r = 0; r < 3; ++r) EXPECT_EQ(channels[r]->shared_memory_peers(), 0) << "rank " << r;
  exchange_in_order(channels);
}

// Rank 1 refuses shared memory: its pairs go over TCP, the pair of ranks 0 and 2 does not.
TEST_F(PeerChannelTest, EveryRankGetsEveryPeersMessageInOrderWithBothTransports) {
  auto channels = make_group(3, {1});
  EXPECT_EQ(channels[0]->shared_memory_peers(), 1);
  EXPECT_EQ(channels[1]->shared_memory_peers(), 0);
  EXPECT_EQ(channels[2]->shared_memory_peers(), 1);
  exchange_in_order(channels);
}

// Outboxes are unlinked once every peer has opened them: nothing stays in /dev/shm, however the
// process ends later.
TEST_F(PeerChannelTest, SharedMemoryLeavesNoNamesBehind) {
  auto channels = make_group(3);
  const std::string prefix = "colony-" + std::to_string(::getpid()) + "-";
  int left = 0;
  if (DIR* dir = ::opendir("/dev/shm")) {
    while (dirent* e = ::readdir(dir)) left += std::string(e->d_name).rfind(prefix, 0) == 0;
    ::closedir(dir);
  }
  EXPECT_EQ(left, 0);
}

// A peer that published its message and exited at once (the last collective before a clean exit)
// is not lost to the rank still reading that message, whether it was asleep or not.
TEST_F(PeerChannelTest, PeerThatSentAndExitedIsNotLost) {
  for (int attempt = 0; attempt < 6; ++attempt) {
    auto channels = fresh_group(2);
    ASSERT_EQ(channels[0]->shared_memory_peers(), 1);
    std::thread leaver([&] {
      std::this_thread::sleep_for(milliseconds(attempt % 2 ? 20 : 0));
      channels[1]->outgoing()[0] = 7;
      channels[1]->exchange(1, Clock::now() + milliseconds(5000), false);
      channels[1].reset();
    });
    channels[0]->outgoing()[0] = 3;
    try {
      EXPECT_EQ(channels[0]->exchange(1, Clock::now() + milliseconds(5000), attempt % 3 == 0)[1][0], 7);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "attempt " << attempt << ": " << e.what();
    }
    leaver.join();
  }
}

TEST_F(PeerChannelTest, RejectsAMessageOverCapacity) {
  auto channels = make_group(2);
  EXPECT_THROW(channels[0]->exchange(kCapacity + 1, Clock::now() + milliseconds(100), false), std::logic_error);
}

// A peer whose channel is gone (its process exited) is named; nothing waits for the deadline.
void expect_lost_peer_named(std::vector<std::unique_ptr<PeerChannel>>& channels) {
  channels[2].reset();
  const auto t0 = Clock::now();
  auto other = std::async(std::launch::async, [&] {
    try {
      channels[1]->exchange(8, Clock::now() + milliseconds(10000), false);
    } catch (const PeerLostError& e) {
      return e.rank();
    }
    return -1;
  });
  try {
    channels[0]->exchange(8, Clock::now() + milliseconds(10000), true);
    ADD_FAILURE() << "exchange with a lost peer returned";
  } catch (const PeerLostError& e) {
    EXPECT_EQ(e.rank(), 2);
    EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(other.get(), 2);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);
}

TEST_F(PeerChannelTest, LostPeerIsNamedThroughSharedMemory) {
  auto channels = make_group(3);
  expect_lost_peer_named(channels);
}

TEST_F(PeerChannelTest, LostPeerIsNamedOverTcp) {
  auto channels = make_group(3, {0, 1, 2});
  expect_lost_peer_named(channels);
}

TEST_F(PeerChannelTest, DeadlineSaysTimedOutAndNamesTheSilentRank) {
  auto channels = make_group(2);
  const auto t0 = Clock::now();
  EXPECT_TRUE(colony::testing::throws_with<std::runtime_error>(
      [&] { channels[0]->exchange(8, Clock::now() + milliseconds(150), true); },
      "timed out waiting for the message of rank(s) 1"));
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_GE(s, 0.14);
  EXPECT_LT(s, 3.0);
}

TEST_F(PeerChannelTest, InterruptEndsAWaitAtOnce) {
  auto channels = make_group(2);
  std::thread aborter([&] {
    std::this_thread::sleep_for(milliseconds(100));
    channels[0]->interrupt();
  });
  const auto t0 = Clock::now();
  EXPECT_TRUE(colony::testing::throws_with<std::runtime_error>(
      [&] { channels[0]->exchange(8, Clock::now() + milliseconds(20000), false); }, "interrupted"));
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 3.0);
  aborter.join();
}

int connect_to(const std::string& host, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, host.c_str(), &a.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Connections to a rank's channel port that are not its peers (garbage, a wrong secret, one that
// says nothing and hangs up) are dropped, and the real peer is still accepted.
TEST_F(PeerChannelTest, StrangersOnTheListeningPortAreIgnored) {
  std::unique_ptr<PeerChannel> rank0, rank1;
  std::thread t0([&] {
    auto store = client();
    socklen_t len = 0;
    const sockaddr_storage addr = loopback(&len);
    rank0 = std::make_unique<PeerChannel>(*store, 0, 2, addr, len, kCapacity, milliseconds(10000));
  });
  auto store = client();
  std::istringstream published(store->get_string("channel/0"));  // waits until rank 0 listens
  std::string host;
  int port = 0;
  published >> host >> port;
  for (int kind = 0; kind < 3; ++kind) {
    int fd = connect_to(host, port);
    ASSERT_GE(fd, 0);
    if (kind == 0) {
      const char junk[] = "GET / HTTP/1.0\r\n\r\nxxxxxxxxxxxxxxxxxx";
      ASSERT_GT(::send(fd, junk, sizeof junk, 0), 0);
    } else if (kind == 1) {
      struct {
        uint64_t magic = 0x436f6c6f6e794348ULL, secret = 12345;
        int32_t rank = 1, size = 2;
      } hello;
      ASSERT_GT(::send(fd, &hello, sizeof hello, 0), 0);
    }
    ::close(fd);
  }
  std::thread t1([&] {
    socklen_t len = 0;
    const sockaddr_storage addr = loopback(&len);
    rank1 = std::make_unique<PeerChannel>(*store, 1, 2, addr, len, kCapacity, milliseconds(10000));
  });
  t0.join();
  t1.join();
  ASSERT_TRUE(rank0 && rank1);
  std::thread other([&] {
    rank1->outgoing()[0] = 11;
    EXPECT_EQ(rank1->exchange(1, Clock::now() + milliseconds(5000), false)[0][0], 10);
  });
  rank0->outgoing()[0] = 10;
  EXPECT_EQ(rank0->exchange(1, Clock::now() + milliseconds(5000), true)[1][0], 11);
  other.join();
}

}  // namespace
}  // namespace colony::dist::comm_detail
