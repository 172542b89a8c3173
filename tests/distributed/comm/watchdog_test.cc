// The watchdog's progress counts: it posts how many collectives its rank has started, and names
// the ranks whose posted count lags this rank's (stalled_ranks), which a timed-out collective
// waited through wait_and_explain turns into a StalledRanksError blaming them.
#include "distributed/comm/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "distributed/store/tcp_store.h"

namespace colony::dist {
namespace {

using namespace std::chrono_literals;

// A group that runs nothing: only its count of collectives started matters here.
class CountingGroup final : public ProcessGroup {
 public:
  CountingGroup(int rank, int size) : rank_(rank), size_(size) {}
  std::atomic<uint64_t> started{0};
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend_name() const override { return "counting"; }
  std::shared_ptr<Work> allreduce(Tensor&, ReduceOp, const CollectiveOptions&) override { return nullptr; }
  std::shared_ptr<Work> broadcast(Tensor&, int, const CollectiveOptions&) override { return nullptr; }
  std::shared_ptr<Work> allgather(std::vector<Tensor>&, const Tensor&, const CollectiveOptions&) override {
    return nullptr;
  }
  std::shared_ptr<Work> reduce_scatter(Tensor&, const std::vector<Tensor>&, ReduceOp,
                                       const CollectiveOptions&) override {
    return nullptr;
  }
  std::shared_ptr<Work> barrier(const CollectiveOptions&) override { return nullptr; }
  void abort(const std::string&) override {}
  uint64_t collectives_started() const override { return started.load(); }

 private:
  int rank_, size_;
};

// A collective that timed out.
class TimedOutWork final : public Work {
 public:
  bool is_completed() const override { return true; }
  void wait(std::chrono::milliseconds) override { throw TimeoutError("allreduce #7 timed out after 2000 ms"); }
  std::exception_ptr exception() const override { return nullptr; }
  std::string description() const override { return "allreduce #7"; }
};

std::shared_ptr<TCPStore> server() {
  TCPStoreOptions o;
  o.port = 0;
  o.is_server = true;
  o.timeout = 10s;
  return std::make_shared<TCPStore>(o);
}

WatchdogOptions quiet() {
  WatchdogOptions o;
  o.interval = 20ms;
  o.heartbeat_timeout = 60s;  // no peer is declared dead here
  return o;
}

TEST(Watchdog, PostsItsRanksCountOfCollectivesStarted) {
  auto store = server();
  auto group = std::make_shared<CountingGroup>(0, 2);
  group->started = 7;
  Watchdog dog(store, group, 0, 2, /*generation=*/3, quiet());
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!store->check({progress_key(3, 0)}) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(store->check({progress_key(3, 0)}));
  EXPECT_EQ(store->get_string(progress_key(3, 0)), "7");
  group->started = 8;
  while (store->get_string(progress_key(3, 0)) != "8" && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(store->get_string(progress_key(3, 0)), "8");
  dog.stop();
}

TEST(Watchdog, NamesTheRanksWhoseCountLags) {
  auto store = server();
  auto group = std::make_shared<CountingGroup>(1, 4);
  group->started = 341;
  Watchdog dog(store, group, 1, 4, 0, quiet());
  store->set(progress_key(0, 0), std::string("340"));  // stuck before #341
  store->set(progress_key(0, 2), std::string("341"));  // started it: waits like rank 1
  store->set(progress_key(0, 3), std::string("339"));  // further behind
  FailureMonitor::Stall stall = dog.stalled_ranks();
  EXPECT_EQ(stall.ranks, (std::vector<int>{0, 3}));
  EXPECT_EQ(stall.description.rfind("ranks 0, 3 stopped making progress: they have started 340, 339 collectives, "
                                    "rank 1 341 (",
                                    0),
            0u)
      << stall.description;
  // A rank that left in order is not stalled; one that never posted is not counted.
  store->set(left_key(0, 3), std::string("1"));
  store->delete_key(progress_key(0, 2));
  stall = dog.stalled_ranks();
  EXPECT_EQ(stall.ranks, std::vector<int>{0});
  EXPECT_EQ(stall.description.rfind("rank 0 stopped making progress: it has started 340 collectives, rank 1 341 (", 0),
            0u)
      << stall.description;
  // Nobody behind: nothing to say.
  group->started = 340;
  EXPECT_TRUE(dog.stalled_ranks().ranks.empty());
  dog.stop();
}

TEST(Watchdog, ATimeoutWhileARankLagsBlamesIt) {
  auto store = server();
  auto group = std::make_shared<CountingGroup>(1, 2);
  group->started = 7;
  auto dog = std::make_shared<Watchdog>(store, group, 1, 2, 0, quiet());
  group->set_failure_monitor(dog);
  auto work = std::make_shared<TimedOutWork>();
  store->set(progress_key(0, 0), std::string("7"));
  try {
    group->wait_and_explain(work);
    ADD_FAILURE() << "no exception";
  } catch (const StalledRanksError& e) {
    ADD_FAILURE() << "rank 0 started #7 too, yet: " << e.what();
  } catch (const TimeoutError& e) {
    EXPECT_EQ(std::string(e.what()), "allreduce #7 timed out after 2000 ms");
  }
  store->set(progress_key(0, 0), std::string("6"));
  try {
    group->wait_and_explain(work);
    ADD_FAILURE() << "no exception";
  } catch (const StalledRanksError& e) {
    EXPECT_EQ(e.stalled(), std::vector<int>{0});
    EXPECT_EQ(e.timeout(), "allreduce #7 timed out after 2000 ms");
    EXPECT_EQ(std::string(e.what()).rfind("allreduce #7 timed out after 2000 ms; rank 0 stopped making progress: it "
                                          "has started 6 collectives, rank 1 7 (",
                                          0),
              0u)
        << e.what();
  }
  dog->stop();
}

}  // namespace
}  // namespace colony::dist
