// The TCPStore paths the rest of distributed/ relies on, across real processes (the store
// helper's tcp_store_test covers every operation in depth).
#include "distributed/tcp_store.h"

#include <thread>

#include "tests/multiprocess.h"
#include "tests/test_util.h"

namespace colony::dist {
namespace {

TCPStoreOptions from_env(int rank) {
  TCPStoreOptions o;
  o.host = "127.0.0.1";
  o.port = std::atoi(std::getenv("MASTER_PORT"));
  o.is_server = rank == 0;
  o.timeout = std::chrono::seconds(10);
  return o;
}

TEST(TCPStoreSmoke, BlockingGetAddAndWaitAcrossProcesses) {
  auto results = testing::run_ranks(3, [](int rank) {
    TCPStore store(from_env(rank));
    store.set("k" + std::to_string(rank), std::to_string(rank * 10));
    for (int r = 0; r < 3; ++r) EXPECT_EQ(store.get_string("k" + std::to_string(r)), std::to_string(r * 10));
    for (int i = 0; i < 50; ++i) store.add("counter", 1);
    store.add("done", 1);
    store.wait({"k0", "k1", "k2"});
    while (store.add("done", 0) < 3) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(store.add("counter", 0), 150);
    // The host keeps serving until everyone has read.
    store.add("read", 1);
    if (rank == 0)
      while (store.add("read", 0) < 3) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  if (testing::in_rank_child()) return;
  EXPECT_TRUE(testing::all_succeeded(results));
}

TEST(TCPStoreSmoke, TimeoutsNameTheMissingKey) {
  TCPStoreOptions o;
  o.port = 0;
  o.is_server = true;
  o.token = "t";
  TCPStore store(o);
  store.set_timeout(std::chrono::milliseconds(200));
  EXPECT_TRUE(testing::throws_with<TimeoutError>([&] { store.get("absent"); }, "absent"));
  EXPECT_TRUE(testing::throws_with<TimeoutError>([&] { store.wait({"a", "b"}, std::chrono::milliseconds(100)); }, "a, b"));
  store.set("a", std::string("1"));
  EXPECT_TRUE(store.check({"a"}));
  EXPECT_FALSE(store.check({"a", "b"}));
  EXPECT_EQ(store.compare_set("a", Bytes{'1'}, Bytes{'2'}), Bytes{'2'});
  EXPECT_EQ(store.compare_set("a", Bytes{'9'}, Bytes{'3'}), Bytes{'2'});
  EXPECT_EQ(store.compare_set("new", {}, Bytes{'x'}), Bytes{'x'});
  EXPECT_TRUE(store.delete_key("a"));
  EXPECT_FALSE(store.delete_key("a"));

  TCPStoreOptions c;
  c.port = store.port();
  c.token = "wrong";
  c.timeout = std::chrono::seconds(2);
  EXPECT_TRUE(testing::throws_with<StoreError>([&] { TCPStore bad(c); }, "refused this process's job token"));
  TCPStoreOptions again = o;
  again.port = store.port();
  EXPECT_TRUE(testing::throws_with<StoreError>([&] { TCPStore twice(again); }, "--master_port=0"));
}

}  // namespace
}  // namespace colony::dist
