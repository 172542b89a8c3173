// ProcessGroupNCCL's logic against a fake NCCL runtime (host memory, events the test completes):
// the unique id's exchange and keys, the order of stream and NCCL calls, fingerprints, the
// watchdog's timeout and error paths, abort. The real runtime is exercised by *_CUDA tests.
#include "distributed/nccl/process_group_nccl.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "distributed/store/tcp_store.h"
#include "tests/distributed/nccl/fake_nccl_runtime.h"
#include "kernels/common/dtype.h"
#include "runtime/cuda.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony::dist {
namespace {

using nccl_detail::CommHandle;
using nccl_detail::CommState;
using nccl_detail::EventHandle;
using nccl_detail::StreamHandle;
using std::chrono::milliseconds;
using nccl_testing::FakeNcclRuntime;

// The statement throws `type` with `text` in its message.
#define EXPECT_THROW_WITH(statement, type, text)                                       \
  try {                                                                                \
    (void)(statement);                                                                 \
    ADD_FAILURE() << "no exception from " #statement;                                  \
  } catch (const type& e) {                                                            \
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();       \
  }

// Records what the group reports, as the job's watchdog would receive it.
class FakeMonitor final : public FailureMonitor {
 public:
  std::string failure_cause() override { return ""; }
  void report_failure(const std::string& message) override {
    std::lock_guard<std::mutex> lock(mu);
    reports.push_back(message);
  }
  std::mutex mu;
  std::vector<std::string> reports;
};

class ProcessGroupNCCLTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TCPStoreOptions o;
    o.port = 0;
    o.is_server = true;
    o.timeout = milliseconds(10000);
    o.token = "nccl-test";
    server_ = std::make_shared<TCPStore>(o);
  }

  std::shared_ptr<TCPStore> client(milliseconds timeout = milliseconds(10000)) {
    TCPStoreOptions o;
    o.port = server_->port();
    o.timeout = timeout;
    o.token = "nccl-test";
    return std::make_shared<TCPStore>(o);
  }

  ProcessGroupNCCLOptions options(const std::shared_ptr<FakeNcclRuntime>& rt) {
    ProcessGroupNCCLOptions o;
    o.runtime = rt;
    o.device = 0;
    o.watchdog_interval = milliseconds(10);
    return o;
  }

  // A group of `world` ranks, each on its own thread (construction meets the others).
  std::vector<std::unique_ptr<ProcessGroupNCCL>> make_group(int world,
                                                            std::vector<std::shared_ptr<FakeNcclRuntime>>& rts,
                                                            int generation = 0) {
    std::vector<std::unique_ptr<ProcessGroupNCCL>> groups(world);
    if (rts.empty())
      for (int r = 0; r < world; ++r) rts.push_back(std::make_shared<FakeNcclRuntime>());
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r)
      threads.emplace_back([&, r] {
        auto o = options(rts[r]);
        o.generation = generation;
        groups[r] = std::make_unique<ProcessGroupNCCL>(client(), r, world, o);
      });
    for (auto& t : threads) t.join();
    return groups;
  }

  std::shared_ptr<TCPStore> server_;
};

TEST_F(ProcessGroupNCCLTest, RankZeroPublishesTheUniqueIdUnderTheGroupAndGenerationKey) {
  std::vector<std::shared_ptr<FakeNcclRuntime>> rts;
  auto g = make_group(2, rts, /*generation=*/3);
  EXPECT_EQ(g[0]->unique_id_key(), "nccl/gen3/group1/unique_id");
  EXPECT_EQ(g[1]->unique_id_key(), "nccl/gen3/group1/unique_id");
  EXPECT_EQ(rts[0]->init_id.size(), nccl_detail::kUniqueIdBytes);
  EXPECT_EQ(rts[0]->init_id, rts[1]->init_id);  // rank 1 read what rank 0 created
  EXPECT_EQ(rts[1]->init_rank, 1);
  EXPECT_EQ(rts[1]->init_size, 2);
  const Bytes stored = server_->get("nccl/gen3/group1/unique_id");
  EXPECT_EQ(std::string(stored.begin(), stored.end()), rts[0]->init_id);

  // The next group on the same store meets under its own key, with a fresh id.
  std::vector<std::shared_ptr<FakeNcclRuntime>> rts2;
  auto g2 = make_group(2, rts2, 3);
  EXPECT_EQ(g2[1]->unique_id_key(), "nccl/gen3/group2/unique_id");
  EXPECT_NE(rts2[0]->init_id, rts[0]->init_id);
  EXPECT_EQ(rts2[0]->init_id, rts2[1]->init_id);
}

TEST_F(ProcessGroupNCCLTest, MissingRankZeroTimesOutNamingTheKey) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  try {
    ProcessGroupNCCL pg(client(milliseconds(300)), 1, 2, options(rt));
    FAIL() << "construction without rank 0 returned";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 did not publish NCCL's unique id (nccl/gen0/group1/unique_id)"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(ProcessGroupNCCLTest, CommunicatorThatNeverGetsReadyIsAbortedAtTheStoreTimeout) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  rt->polls_until_ready = -1;
  EXPECT_THROW_WITH(ProcessGroupNCCL(client(milliseconds(200)), 0, 1, options(rt)), TimeoutError,
                    "the NCCL communicator was not ready within the store's timeout of 200 ms");
  EXPECT_EQ(rt->aborts.load(), 1);
}

TEST_F(ProcessGroupNCCLTest, CommunicatorSetupErrorIsNamed) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  rt->set_async_error("unhandled system error");
  EXPECT_THROW_WITH(ProcessGroupNCCL(client(), 0, 1, options(rt)), CollectiveError,
                    "creating the NCCL communicator on cuda:0 failed: unhandled system error");
}

TEST_F(ProcessGroupNCCLTest, CollectiveRunsOnTheCommStreamAfterTheComputeStream) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  rt->take_calls();
  Tensor t = raw::from_vector(std::vector<float>{1, 2, 3, 4}, {4});
  auto w = pg.allreduce(t, ReduceOp::kAvg);
  EXPECT_EQ(rt->take_calls(), (std::vector<std::string>{"record on compute", "comm waits", "record_stream 4 on comm",
                                                        "group_start", "all_reduce 4 float32 avg on comm",
                                                        "group_end", "record on comm"}));
  EXPECT_TRUE(w->is_completed());
  w->wait();  // the caller's stream waits; the host does not
  EXPECT_EQ(rt->take_calls(), std::vector<std::string>{"compute waits"});
  EXPECT_EQ(w->description(), "allreduce #1 (float32, 4 elements, avg)");
}

// Event records and stream waits name the group's device, so that the real runtime makes it current
// even on a thread whose current device is another (the fake notes a call with the wrong one).
TEST_F(ProcessGroupNCCLTest, EventCallsNameTheGroupsDeviceFromAnyThread) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  auto o = options(rt);
  o.device = 1;
  ProcessGroupNCCL pg(client(), 0, 1, o);
  Tensor t = raw::zeros({4});
  auto w = pg.allreduce(t);
  std::thread([&] { w->wait(); }).join();
  for (const std::string& call : rt->take_calls()) EXPECT_EQ(call.find("wrong device"), std::string::npos) << call;
}

// Inside a CUDA graph capture the collective is queued into the graph and runs at each replay:
// the host has nothing to wait for or watch (no watchdog timeout however long the events stay
// unfinished), the allocator is not told (the graph keeps its memory), and waiting joins the
// communication stream back into the capture.
TEST_F(ProcessGroupNCCLTest, CapturedCollectiveIsQueuedIntoTheGraphAndNotWatched) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  rt->take_calls();
  rt->capture = true;
  rt->events_complete = false;  // a capture's events never complete on the host
  Tensor t = raw::from_vector(std::vector<float>{1, 2}, {2});
  CollectiveOptions o;
  o.timeout = milliseconds(20);
  auto w = pg.allreduce(t, ReduceOp::kSum, o);
  EXPECT_EQ(rt->take_calls(), (std::vector<std::string>{"record on compute", "comm waits", "group_start",
                                                        "all_reduce 2 float32 sum on comm", "group_end",
                                                        "record on comm"}));
  EXPECT_TRUE(w->is_completed());
  w->wait();
  EXPECT_EQ(rt->take_calls(), std::vector<std::string>{"compute waits"});
  std::this_thread::sleep_for(milliseconds(150));  // several watchdog rounds past the timeout
  EXPECT_EQ(rt->aborts.load(), 0);
  rt->capture = false;
  rt->events_complete = true;
  pg.allreduce(t)->wait();  // the group goes on
  EXPECT_EQ(rt->aborts.load(), 0);
}

TEST_F(ProcessGroupNCCLTest, ListCollectivesAreGroupedPerRank) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  Tensor in = raw::from_vector(std::vector<float>{5, 6}, {2});
  std::vector<Tensor> outs{raw::zeros({2})};
  rt->take_calls();
  pg.allgather(outs, in)->wait();
  auto calls = rt->take_calls();
  EXPECT_EQ(std::vector<std::string>(calls.begin() + 3, calls.end() - 2),
            (std::vector<std::string>{"record_stream 2 on comm", "group_start", "broadcast 2 root 0 on comm",
                                      "group_end"}));
  EXPECT_EQ(outs[0].data_ptr<float>()[1], 6.0f);

  Tensor out = raw::zeros({2});
  std::vector<Tensor> ins{in};
  pg.reduce_scatter(out, ins, ReduceOp::kMax)->wait();
  calls = rt->take_calls();
  EXPECT_NE(std::find(calls.begin(), calls.end(), "reduce 2 max root 0 on comm"), calls.end());
  EXPECT_EQ(out.data_ptr<float>()[0], 5.0f);

  std::vector<Tensor> bucket{raw::zeros({3}), raw::zeros({5})};
  auto w = pg.allreduce_coalesced(bucket);
  calls = rt->take_calls();
  const auto start = std::find(calls.begin(), calls.end(), "group_start");
  ASSERT_NE(start, calls.end());
  EXPECT_EQ(std::vector<std::string>(start, start + 4),
            (std::vector<std::string>{"group_start", "all_reduce 3 float32 sum on comm",
                                      "all_reduce 5 float32 sum on comm", "group_end"}));
  EXPECT_EQ(w->description(), "allreduce #3 (float32, 8 elements as 2 tensors, sum)");
}

TEST_F(ProcessGroupNCCLTest, FlatCollectivesAreOneNcclCallEach) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  Tensor in = raw::from_vector(std::vector<float>{5, 6}, {2});
  Tensor gathered = raw::zeros({1, 2});
  rt->take_calls();
  auto w = pg.allgather_into_tensor(gathered, in);
  EXPECT_EQ(w->description(), "allgather #1 (float32, 2 elements per rank)");
  w->wait();
  auto calls = rt->take_calls();
  const auto start = std::find(calls.begin(), calls.end(), "group_start");
  ASSERT_NE(start, calls.end());
  EXPECT_EQ(std::vector<std::string>(start, start + 3),
            (std::vector<std::string>{"group_start", "all_gather 2 float32 on comm", "group_end"}));
  EXPECT_EQ(gathered.data_ptr<float>()[1], 6.0f);

  Tensor out = raw::zeros({2}, kBFloat16);
  Tensor big = raw::from_vector(std::vector<float>{3, 4}, {2});
  Tensor big16 = raw::to(big, kCPU, kBFloat16);
  pg.reduce_scatter_tensor(out, big16, ReduceOp::kAvg)->wait();
  calls = rt->take_calls();
  EXPECT_NE(std::find(calls.begin(), calls.end(), "reduce_scatter 2 bfloat16 avg on comm"), calls.end());
  EXPECT_EQ(testing::values(out)[1], 4.0);

  Tensor three = raw::zeros({3});
  EXPECT_THROW_WITH(pg.reduce_scatter_tensor(out, three), std::invalid_argument,
                    "reduce_scatter_tensor: input is float32 with 3 elements, but it must be bfloat16 with 1 x 2 "
                    "elements (output's count per rank)");
  Tensor bools = raw::zeros({2}, kBool);
  Tensor bool_out = raw::zeros({2}, kBool);
  EXPECT_THROW_WITH(pg.reduce_scatter_tensor(bool_out, bools), std::invalid_argument,
                    "reduce_scatter_tensor: NCCL cannot reduce dtype bool");
  EXPECT_THROW_WITH(pg.allgather_into_tensor(three, in), std::invalid_argument,
                    "allgather_into_tensor: output is float32 with 3 elements, but it must be float32 with 1 x 2");
}

TEST_F(ProcessGroupNCCLTest, BadTensorsAreRefusedWithTheReason) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  Tensor b = raw::zeros({2}, kBool);
  EXPECT_THROW_WITH(pg.allreduce(b), std::invalid_argument, "allreduce: NCCL cannot reduce dtype bool (reducible: ");
  std::vector<Tensor> bools{b};
  EXPECT_THROW_WITH(pg.allreduce_coalesced(bools), std::invalid_argument, "NCCL cannot reduce dtype bool");
  Tensor bool_out = raw::zeros({2}, kBool);
  EXPECT_THROW_WITH(pg.reduce_scatter(bool_out, bools), std::invalid_argument,
                    "reduce_scatter: NCCL cannot reduce dtype bool");
  Tensor t = raw::zeros({2});
  EXPECT_THROW_WITH(pg.broadcast(t, 1), std::invalid_argument, "root 1 is not a rank of this group");
  std::vector<Tensor> two{raw::zeros({2}), raw::zeros({2})};
  EXPECT_THROW_WITH(pg.allgather(two, t), std::invalid_argument, "outputs has 2 tensors, expected one per rank (1)");
}

// DDP's broadcast_buffers sends bool buffers too: moving them works as with Gloo (as uint8).
TEST_F(ProcessGroupNCCLTest, BoolTensorsAreBroadcastAndGathered) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  Tensor flags = raw::to(raw::from_vector(std::vector<float>{1, 0, 1}, {3}), kCPU, kBool);
  pg.broadcast(flags, 0)->wait();
  std::vector<Tensor> outs{raw::zeros({3}, kBool)};
  pg.allgather(outs, flags)->wait();
  EXPECT_EQ(testing::values(outs[0]), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(rt->aborts.load(), 0);
}

TEST_F(ProcessGroupNCCLTest, WatchdogAbortsACollectivePastItsTimeoutAndTellsTheJob) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  auto monitor = std::make_shared<FakeMonitor>();
  pg.set_failure_monitor(monitor);
  rt->events_complete = false;  // the GPU never gets there
  Tensor t = raw::zeros({4});
  CollectiveOptions o;
  o.timeout = milliseconds(100);
  auto w = pg.allreduce(t, ReduceOp::kSum, o);
  EXPECT_FALSE(w->is_completed());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW_WITH(synchronize(*w), TimeoutError,
                    "allreduce #1 (float32, 4 elements, sum) timed out after 100 ms on rank 0's GPU (cuda:0)");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(rt->aborts.load(), 1);
  {
    std::lock_guard<std::mutex> lock(monitor->mu);
    ASSERT_EQ(monitor->reports.size(), 1u);
    EXPECT_NE(monitor->reports[0].find("allreduce #1"), std::string::npos);
  }
  // The group is unusable from now on, and says why.
  auto later = pg.barrier();
  EXPECT_THROW_WITH(later->wait(), CollectiveError, "barrier #2 cannot run: this ProcessGroupNCCL was aborted");
}

TEST_F(ProcessGroupNCCLTest, AsyncNcclErrorAbortsNamingTheCollectiveInFlight) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  auto monitor = std::make_shared<FakeMonitor>();
  pg.set_failure_monitor(monitor);
  rt->events_complete = false;
  Tensor t = raw::zeros({8}, kBFloat16);
  auto w = pg.broadcast(t, 0);
  rt->set_async_error("remote process exited or there was a network error");
  EXPECT_THROW_WITH(synchronize(*w), CollectiveError,
                    "NCCL error on rank 0's GPU (cuda:0) during broadcast #1 (bfloat16, 8 elements, root 0): remote "
                    "process exited");
  EXPECT_EQ(rt->aborts.load(), 1);
  std::lock_guard<std::mutex> lock(monitor->mu);
  ASSERT_EQ(monitor->reports.size(), 1u);
  EXPECT_NE(monitor->reports[0].find("NCCL error"), std::string::npos);
}

TEST_F(ProcessGroupNCCLTest, AbortFailsInFlightWorkWithTheReason) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  rt->events_complete = false;
  Tensor t = raw::zeros({4});
  auto w = pg.allreduce(t);
  pg.abort("rank 3 failed: data file vanished");
  EXPECT_TRUE(w->is_completed());
  EXPECT_THROW_WITH(w->wait(), CollectiveError, "allreduce #1 aborted: rank 3 failed: data file vanished");
  EXPECT_EQ(rt->aborts.load(), 1);
}

// ncclCommAbort frees the communicator: an abort from another thread (the job's failure handling)
// while a launch is inside NCCL calls must wait for it to leave them, and the launch's Work fails.
TEST_F(ProcessGroupNCCLTest, AbortDuringALaunchIsDeferredUntilTheLaunchLeavesNccl) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  std::mutex mu;
  std::condition_variable cv;
  bool inside = false, go_on = false;
  rt->in_group_end = [&] {
    std::unique_lock<std::mutex> lock(mu);
    inside = true;
    cv.notify_all();
    cv.wait(lock, [&] { return go_on; });
  };
  Tensor t = raw::zeros({4});
  std::shared_ptr<Work> w;
  std::thread launcher([&] { w = pg.allreduce(t); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return inside; });
  }
  pg.abort("rank 1 failed: out of memory");  // returns at once
  EXPECT_EQ(rt->aborts.load(), 0) << "the communicator is freed while a launch is inside NCCL";
  {
    std::lock_guard<std::mutex> lock(mu);
    go_on = true;
  }
  cv.notify_all();
  launcher.join();
  EXPECT_EQ(rt->aborts.load(), 1);
  EXPECT_EQ(rt->group_depth.load(), 0);
  {
    std::lock_guard<std::mutex> lock(rt->mu);
    EXPECT_TRUE(rt->used_after_abort.empty()) << rt->used_after_abort.front();
  }
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->is_completed());
  EXPECT_THROW_WITH(w->wait(), CollectiveError, "allreduce #1 aborted: rank 1 failed: out of memory");
  EXPECT_THROW_WITH(pg.allreduce(t)->wait(), CollectiveError, "rank 1 failed: out of memory");
  rt->in_group_end = nullptr;
}

// An NCCL call that throws inside ncclGroupStart/End must still end the group: NCCL's group depth
// is per thread, and left above zero it makes every later NCCL call of the thread wait forever.
TEST_F(ProcessGroupNCCLTest, CollectiveThatThrowsInsideTheGroupStillEndsIt) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  rt->set_collective_error("ncclAllReduce: unhandled cuda error");
  std::vector<Tensor> bucket{raw::zeros({3}), raw::zeros({5})};
  auto w = pg.allreduce_coalesced(bucket);
  EXPECT_THROW_WITH(w->wait(), CollectiveError,
                    "allreduce #1 (float32, 8 elements as 2 tensors, sum) could not be queued on rank 0's GPU: "
                    "ncclAllReduce: "
                    "unhandled cuda error");
  EXPECT_EQ(rt->group_depth.load(), 0);
  const auto calls = rt->take_calls();
  EXPECT_NE(std::find(calls.begin(), calls.end(), "group_end"), calls.end());
  EXPECT_EQ(rt->aborts.load(), 1);  // the group cannot go on after a failed launch
}

TEST_F(ProcessGroupNCCLTest, FinishedGroupDestroysItsCommunicator) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  {
    ProcessGroupNCCL pg(client(), 0, 1, options(rt));
    Tensor t = raw::zeros({4});
    pg.allreduce(t)->wait();
  }
  EXPECT_EQ(rt->destroys.load(), 1);
  EXPECT_EQ(rt->aborts.load(), 0);
}

// wait() never blocks the host, so the group is usually destroyed while its last collectives still
// run on the GPU: it must wait for them and then destroy the communicator, not abort it (which
// would stop the kernels part-way and leave partial sums behind, without any error).
TEST_F(ProcessGroupNCCLTest, TeardownWaitsForTheCollectivesStillRunningThenDestroys) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  rt->events_complete = false;  // still running on the GPU when the group goes
  Tensor t = raw::zeros({4});
  std::shared_ptr<Work> w;
  std::thread gpu;
  {
    ProcessGroupNCCL pg(client(), 0, 1, options(rt));
    w = pg.allreduce(t);
    w->wait();  // the compute stream waits; the host goes on to destroy the group
    gpu = std::thread([&] {
      std::this_thread::sleep_for(milliseconds(100));
      rt->complete_events();
    });
  }
  gpu.join();
  EXPECT_EQ(rt->destroys.load(), 1);
  EXPECT_EQ(rt->aborts.load(), 0);
  EXPECT_TRUE(w->is_completed());
  EXPECT_EQ(w->exception(), nullptr);
}

TEST_F(ProcessGroupNCCLTest, TeardownAbortsACollectiveStillRunningPastItsDeadline) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  rt->events_complete = false;  // the GPU never gets there
  Tensor t = raw::zeros({4});
  CollectiveOptions o;
  o.timeout = milliseconds(100);
  std::shared_ptr<Work> w;
  const auto t0 = std::chrono::steady_clock::now();
  {
    ProcessGroupNCCL pg(client(), 0, 1, options(rt));
    w = pg.allreduce(t, ReduceOp::kSum, o);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(rt->aborts.load(), 1);
  EXPECT_EQ(rt->destroys.load(), 0);
  EXPECT_THROW_WITH(w->wait(), CollectiveError, "allreduce #1 aborted: the ProcessGroupNCCL was destroyed while it");
}

TEST_F(ProcessGroupNCCLTest, TeardownAbortsAtOnceOnAnNcclError) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  rt->events_complete = false;
  Tensor t = raw::zeros({4});
  const auto t0 = std::chrono::steady_clock::now();
  {
    ProcessGroupNCCL pg(client(), 0, 1, options(rt));
    pg.allreduce(t);  // the group's default timeout: ten minutes
    rt->set_async_error("remote process exited or there was a network error");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(rt->aborts.load(), 1);
  EXPECT_EQ(rt->destroys.load(), 0);
}

// NCCL finalizes a communicator only once every CUDA graph that captured one of its collectives is
// destroyed, and a graph may well outlive the group: finalizing would hang at exit, so a group
// that captured any aborts at teardown (nothing eager is running by then).
TEST_F(ProcessGroupNCCLTest, GroupThatCapturedACollectiveIsAbortedAtTeardownNotFinalized) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  {
    ProcessGroupNCCL pg(client(), 0, 1, options(rt));
    Tensor t = raw::zeros({4});
    pg.allreduce(t)->wait();  // eager
    rt->capture = true;
    pg.allreduce(t)->wait();  // into a graph that may outlive the group
    rt->capture = false;
  }
  EXPECT_EQ(rt->aborts.load(), 1);
  EXPECT_EQ(rt->destroys.load(), 0);
}

// Finalizing is bounded by the group's timeout (the real runtime gives up polling then), and a
// finalize that fails or times out is followed by an abort instead of an exception out of the
// destructor. Queuing a collective is bounded by the collective's own timeout.
TEST_F(ProcessGroupNCCLTest, FinalizeAndQueuingAreBoundedAndAFailedFinalizeAborts) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  {
    auto o = options(rt);
    o.timeout = milliseconds(4321);
    ProcessGroupNCCL pg(client(), 0, 1, o);
    Tensor t = raw::zeros({4});
    CollectiveOptions co;
    co.timeout = milliseconds(1234);
    pg.allreduce(t, ReduceOp::kSum, co)->wait();
    {
      std::lock_guard<std::mutex> lock(rt->mu);
      EXPECT_EQ(rt->group_end_timeout, milliseconds(1234));
    }
    rt->set_destroy_error("ncclCommFinalize was still in progress after 4321 ms");
  }
  std::lock_guard<std::mutex> lock(rt->mu);
  EXPECT_EQ(rt->destroy_timeout, milliseconds(4321));
  EXPECT_EQ(rt->aborts.load(), 1);
}

// An exception escaping the watchdog thread would end the process through std::terminate (whose
// handler reports this rank failed): a CUDA error while checking the collectives fails the group
// and tells the job in words instead.
TEST_F(ProcessGroupNCCLTest, WatchdogThatCannotQueryAnEventFailsTheGroupInsteadOfTerminating) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  ProcessGroupNCCL pg(client(), 0, 1, options(rt));
  auto monitor = std::make_shared<FakeMonitor>();
  pg.set_failure_monitor(monitor);
  rt->events_complete = false;
  Tensor t = raw::zeros({4});
  auto w = pg.allreduce(t);
  rt->query_failure = FakeNcclRuntime::QueryFailure::kCudaError;
  const std::string why =
      "the NCCL watchdog on rank 0's GPU (cuda:0) could not check its collectives: cudaEventQuery: an illegal memory "
      "access was encountered";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (rt->aborts.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(rt->aborts.load(), 1);
  EXPECT_THROW_WITH(w->wait(), CollectiveError, "allreduce #1 aborted: " + why);
  std::lock_guard<std::mutex> lock(monitor->mu);
  ASSERT_EQ(monitor->reports.size(), 1u);
  EXPECT_EQ(monitor->reports[0], why);
}

// At exit the CUDA runtime may unload before the group is destroyed: the watchdog stops quietly
// (the job may well have finished: no failure is reported) and teardown makes no NCCL call.
TEST_F(ProcessGroupNCCLTest, RuntimeUnloadingAtExitStopsTheWatchdogQuietly) {
  auto rt = std::make_shared<FakeNcclRuntime>();
  auto monitor = std::make_shared<FakeMonitor>();
  {
    ProcessGroupNCCL pg(client(), 0, 1, options(rt));
    pg.set_failure_monitor(monitor);
    rt->events_complete = false;
    Tensor t = raw::zeros({4});
    pg.allreduce(t);
    rt->query_failure = FakeNcclRuntime::QueryFailure::kRuntimeUnloading;
    std::this_thread::sleep_for(milliseconds(50));  // several watchdog rounds
  }
  EXPECT_EQ(rt->aborts.load(), 0);
  EXPECT_EQ(rt->destroys.load(), 0);
  std::lock_guard<std::mutex> lock(monitor->mu);
  EXPECT_TRUE(monitor->reports.empty());
}

TEST_F(ProcessGroupNCCLTest, MismatchedCollectivesAreNamedOnEveryRankAndTheGroupGoesOn) {
  std::vector<std::shared_ptr<FakeNcclRuntime>> rts;
  auto g = make_group(2, rts);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      Tensor t = raw::zeros({r == 0 ? 10 : 12});
      auto w = r == 0 ? g[r]->allreduce(t) : g[r]->broadcast(t, 0);
      try {
        w->wait();
      } catch (const CollectiveError& e) {
        errors[r] = e.what();
      }
      Tensor ok = raw::zeros({3});
      g[r]->allreduce(ok)->wait();  // still usable
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r)
    EXPECT_NE(errors[r].find("collective mismatch at #1: rank 0 called allreduce(float32, 10 elements, sum), rank 1 "
                             "called broadcast(float32, 12 elements, root 0)"),
              std::string::npos)
        << errors[r];
}

// allreduce_coalesced queues one ncclAllReduce per tensor: ranks that split the same total
// differently would hand NCCL collectives of different counts to match (a hang or corrupt sums).
// The fingerprint carries the sizes, so every rank fails with the same words before queuing.
TEST_F(ProcessGroupNCCLTest, CoalescedTensorsSplitDifferentlyAreAMismatchOnEveryRank) {
  std::vector<std::shared_ptr<FakeNcclRuntime>> rts;
  auto g = make_group(2, rts);
  for (auto& rt : rts) rt->take_calls();
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      std::vector<Tensor> bucket{raw::zeros({r == 0 ? 100 : 50}), raw::zeros({r == 0 ? 50 : 100})};
      try {
        g[r]->allreduce_coalesced(bucket)->wait();
      } catch (const CollectiveError& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(errors[r].find("collective mismatch at #1: rank 0 called allreduce(float32, 150 elements as 2 tensors "
                             "of sizes #"),
              std::string::npos)
        << errors[r];
    EXPECT_NE(errors[r].find("rank 1 called allreduce(float32, 150 elements as 2 tensors of sizes #"),
              std::string::npos)
        << errors[r];
    for (const std::string& call : rts[r]->take_calls())
      EXPECT_EQ(call.find("all_reduce"), std::string::npos) << "rank " << r << " queued " << call;
  }
}

TEST_F(ProcessGroupNCCLTest, RankThatNeverCallsTimesOutOnTheOthersAndTheJobIsTold) {
  std::vector<std::shared_ptr<FakeNcclRuntime>> rts;
  auto g = make_group(2, rts);
  auto monitor = std::make_shared<FakeMonitor>();
  g[0]->set_failure_monitor(monitor);
  Tensor t = raw::zeros({4});
  CollectiveOptions o;
  o.timeout = milliseconds(200);
  auto w = g[0]->allreduce(t, ReduceOp::kSum, o);  // rank 1 never calls it
  EXPECT_THROW_WITH(w->wait(), TimeoutError,
                    "allreduce #1 (float32, 4 elements, sum) timed out after 200 ms on rank 0 waiting for the other "
                    "ranks to call it");
  std::lock_guard<std::mutex> lock(monitor->mu);
  EXPECT_EQ(monitor->reports.size(), 1u);
}

TEST(ProcessGroupNCCL_CUDA, WorldOfOneRunsEveryCollective) {
  COLONY_REQUIRE_CUDA(1);
  TCPStoreOptions so;
  so.port = 0;
  so.is_server = true;
  so.token = "nccl-cuda";
  auto store = std::make_shared<TCPStore>(so);
  ProcessGroupNCCLOptions o;
  o.device = 0;
  ProcessGroupNCCL pg(store, 0, 1, o);
  const Device dev = Device::cuda(0);
  for (DType d : {kFloat32, kFloat16, kBFloat16, kInt32, kInt64}) {
    Tensor t = raw::to(raw::from_vector(std::vector<float>{1, 2, 3}, {3}), dev, d);
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin}) pg.allreduce(t, op)->wait();
    pg.broadcast(t, 0)->wait();
    EXPECT_EQ(testing::values(t)[2], 3.0) << dtype_name(d);
  }
  Tensor in = raw::to(raw::from_vector(std::vector<float>{7, 8}, {2}), dev, kFloat32);
  std::vector<Tensor> outs{raw::zeros({2}, TensorOptions(dev))};
  pg.allgather(outs, in)->wait();
  Tensor out = raw::zeros({2}, TensorOptions(dev));
  std::vector<Tensor> ins{in};
  auto w = pg.reduce_scatter(out, ins);
  synchronize(*w);
  EXPECT_TRUE(w->is_completed());
  EXPECT_EQ(testing::values(outs[0])[1], 8.0);
  EXPECT_EQ(testing::values(out)[0], 7.0);
  // The flat forms: ncclAllGather and ncclReduceScatter.
  Tensor flat = raw::zeros({2}, TensorOptions(dev));
  pg.allgather_into_tensor(flat, in)->wait();
  Tensor scattered = raw::zeros({2}, TensorOptions(dev));
  synchronize(*pg.reduce_scatter_tensor(scattered, in, ReduceOp::kAvg));
  EXPECT_EQ(testing::values(flat)[1], 8.0);
  EXPECT_EQ(testing::values(scattered)[0], 7.0);
  synchronize(*pg.barrier());
}

}  // namespace
}  // namespace colony::dist
