// init_process_group under other launchers than colonyrun: mpirun's and srun's variables give the
// same group, and the torchrun variables they are exported as make DistributedSampler shard by
// the same rank (it reads RANK and WORLD_SIZE by itself); under PyTorch's torchrun the ranks meet
// through its agent's store (a server written to its protocol stands in), keys under the attempt.
#include <cstdlib>
#include <memory>
#include <string>

#include "data/sampler.h"
#include "distributed/init.h"
#include "distributed/store/store.h"
#include "tests/distributed/store/torch_store_server.h"
#include "tests/multiprocess.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::in_rank_child;
using testing::run_ranks;

void forget_torchrun_variables() {
  for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}) ::unsetenv(v);
}

std::string env_or_unset(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "<unset>";
}

// The body every launcher's test runs once the launcher's own variables are in place.
void expect_two_rank_group(int rank) {
  dist::init_process_group();
  EXPECT_EQ(dist::get_rank(), rank);
  EXPECT_EQ(dist::get_world_size(), 2);
  EXPECT_EQ(dist::get_local_rank(), rank);
  EXPECT_EQ(dist::get_local_world_size(), 2);
  EXPECT_EQ(dist::is_main_process(), rank == 0);
  EXPECT_EQ(env_or_unset("RANK"), std::to_string(rank));
  EXPECT_EQ(env_or_unset("WORLD_SIZE"), "2");
  EXPECT_EQ(env_or_unset("LOCAL_RANK"), std::to_string(rank));
  EXPECT_EQ(env_or_unset("LOCAL_WORLD_SIZE"), "2");
  data::DistributedSampler sampler(10);
  EXPECT_EQ(sampler.rank(), rank);
  EXPECT_EQ(sampler.num_replicas(), 2);
  // The group works: each rank contributes its rank + 1.
  EXPECT_DOUBLE_EQ(dist::all_reduce(rank + 1.0, dist::ReduceOp::kSum), 3.0);
  EXPECT_TRUE(dist::local_device().is_cpu() || dist::local_device().is_cuda());
  dist::destroy_process_group();
}

TEST(InitProcessGroup, OpenMpiVariablesGiveTheGroup) {
  auto results = run_ranks(2, [](int rank) {
    forget_torchrun_variables();
    expect_two_rank_group(rank);
  }, {std::chrono::seconds(60),
      {{"OMPI_COMM_WORLD_RANK", "{rank}"},
       {"OMPI_COMM_WORLD_SIZE", "2"},
       {"OMPI_COMM_WORLD_LOCAL_RANK", "{rank}"},
       {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}});
  if (in_rank_child()) return;
  EXPECT_TRUE(testing::all_succeeded(results));
}

TEST(InitProcessGroup, SlurmVariablesGiveTheGroup) {
  auto results = run_ranks(2, [](int rank) {
    forget_torchrun_variables();
    expect_two_rank_group(rank);
  }, {std::chrono::seconds(60),
      {{"SLURM_PROCID", "{rank}"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "{rank}"}, {"SLURM_NTASKS_PER_NODE", "2"}}});
  if (in_rank_child()) return;
  EXPECT_TRUE(testing::all_succeeded(results));
}

TEST(InitProcessGroup, OptionsOverrideTheEnvironment) {
  auto results = run_ranks(2, [](int rank) {
    // The environment says otherwise; the options win, and the environment follows them.
    ::setenv("RANK", "7", 1);
    ::setenv("WORLD_SIZE", "9", 1);
    dist::InitOptions o;
    o.rank = rank;
    o.world_size = 2;
    dist::init_process_group(o);
    EXPECT_EQ(dist::get_rank(), rank);
    EXPECT_EQ(dist::get_world_size(), 2);
    EXPECT_EQ(env_or_unset("RANK"), std::to_string(rank));
    EXPECT_EQ(env_or_unset("WORLD_SIZE"), "2");
    EXPECT_DOUBLE_EQ(dist::all_reduce(1.0, dist::ReduceOp::kSum), 2.0);
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(testing::all_succeeded(results));
}

TEST(InitProcessGroup, BadRankAndBackendAreExplained) {
  dist::InitOptions o;
  o.rank = 2;
  o.world_size = 2;
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([&] { dist::init_process_group(o); },
                                                          "rank 2 is not valid for world size 2"));
  dist::InitOptions b;
  b.backend = "mpi";
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([&] { dist::init_process_group(b); },
                                                          "unknown backend \"mpi\""));
  EXPECT_FALSE(dist::is_initialized());
}

TEST(InitProcessGroup, NcclWithoutAGpuSaysWhatIsMissing) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  dist::InitOptions o;
  o.backend = "nccl";
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([&] { dist::init_process_group(o); },
                                                          "backend \"nccl\" needs a CUDA device and a CUDA build"));
  EXPECT_FALSE(dist::is_initialized());
}

TEST(InitProcessGroup, UnderTorchrunTheRanksMeetThroughItsAgentsStore) {
  // torchrun's agent hosts a PyTorch TCPStore on MASTER_PORT and says so; this is its second
  // attempt (one restart).
  std::unique_ptr<dist::testing::TorchStoreServer> agent;
  if (!in_rank_child()) agent = std::make_unique<dist::testing::TorchStoreServer>();
  testing::RunRanksOptions o;
  o.env = {{"TORCHELASTIC_USE_AGENT_STORE", "True"},
           {"TORCHELASTIC_RUN_ID", "none"},
           {"TORCHELASTIC_RESTART_COUNT", "1"}};
  o.master_port = agent ? agent->port() : 0;
  auto results = run_ranks(2, [](int rank) {
    EXPECT_EQ(dist::restart_count(), 1);
    expect_two_rank_group(rank);
  }, o);
  if (in_rank_child()) return;
  EXPECT_TRUE(testing::all_succeeded(results));
  // Every key Colony wrote is under its prefix for this attempt (after PyTorch's leading "/").
  const auto data = agent->data();
  EXPECT_FALSE(data.empty());
  for (const auto& [key, value] : data) EXPECT_EQ(key.rfind("/colony/attempt_1/", 0), 0u) << key;
}

TEST(InitProcessGroup, ErrorsNameTheLauncherThatWasDetected) {
  const int port = testing::free_port();
  ::setenv("TORCHELASTIC_USE_AGENT_STORE", "True", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  dist::InitOptions o;
  o.rank = 1;
  o.world_size = 2;
  o.timeout = std::chrono::milliseconds(500);
  try {
    dist::init_process_group(o);
    ADD_FAILURE() << "expected a StoreError";
  } catch (const dist::StoreError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("hosted by torchrun's agent"), std::string::npos) << m;
    EXPECT_NE(m.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << m;
    EXPECT_NE(m.find("launcher detected: torchrun (TORCHELASTIC_USE_AGENT_STORE=True"), std::string::npos) << m;
  }
  for (const char* v : {"TORCHELASTIC_USE_AGENT_STORE", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE",
                        "LOCAL_RANK", "LOCAL_WORLD_SIZE"})
    ::unsetenv(v);
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([] { dist::init_process_group(); },
                                                          "launcher detected: mpirun (Open MPI)"));
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "RANK", "WORLD_SIZE", "LOCAL_RANK",
                        "LOCAL_WORLD_SIZE"})
    ::unsetenv(v);
  EXPECT_FALSE(dist::is_initialized());
}

}  // namespace
}  // namespace colony
