// init_process_group under other launchers than colonyrun: mpirun's and srun's variables give the
// same group, and the torchrun variables they are exported as make DistributedSampler shard by
// the same rank (it reads RANK and WORLD_SIZE by itself); under PyTorch's torchrun the ranks meet
// through its agent's store (a server written to its protocol stands in), keys under the attempt.
#include <cstdlib>
#include <memory>
#include <string>

#include "data/sampler.h"
#include "distributed/backend_choice.h"
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

TEST(InitProcessGroup, DeviceCudaMeansThisRanksOwnGpu) {
  EXPECT_EQ(dist::device_for_rank("cuda", 1, 2), Device::cuda(1));
  EXPECT_EQ(dist::device_for_rank("cuda", 3, 2), Device::cuda(1)) << "modulo the GPUs, as init_process_group";
  EXPECT_EQ(dist::device_for_rank("cuda", 1, 1), Device::cuda(0)) << "ranks sharing the one GPU";
  EXPECT_EQ(dist::device_for_rank("auto", 1, 4), Device::cuda(1));
  EXPECT_EQ(dist::device_for_rank("auto", 1, 0), kCPU);
  EXPECT_EQ(dist::device_for_rank("cuda:0", 1, 2), Device::cuda(0)) << "an explicit index is taken as given";
  EXPECT_EQ(dist::device_for_rank("cpu", 1, 2), kCPU);
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([] { dist::device_for_rank("cuda", 0, 0); },
                                                          "device \"cuda\" asked for, but this machine has no CUDA"));
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([] { dist::device_for_rank("gpu", 0, 1); },
                                                          "cannot parse \"gpu\""));
}

// The normal per-rank GPU isolation (CUDA_VISIBLE_DEVICES per rank, Slurm's --gpus-per-task=1):
// LOCAL_WORLD_SIZE=8 and every process sees one GPU, cuda:0, each a different one. That is NCCL's
// setup, whether asked for or "auto"; fewer GPUs than local ranks in one process used to make
// "auto" pick Gloo and "nccl" throw.
TEST(InitProcessGroup, RanksGivenAGpuEachByTheLauncherRunNccl) {
  EXPECT_EQ(dist::init_detail::local_gpu(5, 1), 0) << "the one GPU this process sees";
  EXPECT_EQ(dist::init_detail::local_gpu(5, 8), 5);
  EXPECT_EQ(dist::init_detail::local_gpu(9, 8), 1);
  for (const char* requested : {"auto", "nccl"}) {
    std::vector<dist::init_detail::BackendOffer> offers;
    for (int r = 0; r < 8; ++r) offers.push_back({requested, "GPU-" + std::to_string(r), ""});
    const dist::init_detail::BackendChoice c = dist::init_detail::choose_backend(offers);
    EXPECT_EQ(c.backend, "nccl") << requested;
    EXPECT_EQ(c.why, "");
  }
}

// Ranks that really share a GPU, or a rank without one: "auto" is Gloo (several ranks may share a
// GPU through it), "nccl" a clear error naming the ranks.
TEST(InitProcessGroup, RanksSharingAGpuOrWithoutOneGetGlooOrAClearError) {
  using dist::init_detail::BackendOffer;
  using dist::init_detail::choose_backend;
  const std::vector<BackendOffer> shared{{"auto", "GPU-a", ""}, {"auto", "GPU-b", ""}, {"auto", "GPU-a", ""}};
  EXPECT_EQ(choose_backend(shared).backend, "gloo");
  EXPECT_EQ(choose_backend(shared).why, "ranks 0 and 2 share the GPU GPU-a");
  std::vector<BackendOffer> forced = shared;
  for (auto& o : forced) o.requested = "nccl";
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>(
      [&] { choose_backend(forced); },
      "backend \"nccl\" needs a GPU of its own for every rank, but ranks 0 and 2 share the GPU GPU-a; use backend "
      "\"gloo\""));

  const std::vector<BackendOffer> one_without{{"auto", "GPU-a", ""}, {"auto", "", "no CUDA device"}};
  EXPECT_EQ(choose_backend(one_without).backend, "gloo");
  EXPECT_EQ(choose_backend(one_without).why, "rank 1 has no GPU (no CUDA device)");
  const std::vector<BackendOffer> gloo{{"gloo", "GPU-a", ""}, {"gloo", "GPU-b", ""}};
  EXPECT_EQ(choose_backend(gloo).backend, "gloo");

  const std::vector<BackendOffer> disagree{{"auto", "GPU-a", ""}, {"nccl", "GPU-b", ""}};
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>(
      [&] { choose_backend(disagree); }, "rank 1 asked for backend \"nccl\" but rank 0 for \"auto\""));
}

TEST(InitProcessGroup, BackendOffersTravelThroughTheStoreIntact) {
  using dist::init_detail::BackendOffer;
  for (const BackendOffer& o : {BackendOffer{"auto", "GPU-6f1c2a3b-0000-1111-2222-333344445555", ""},
                                BackendOffer{"nccl", "", "cudaGetDeviceCount: no CUDA-capable device is detected"}}) {
    const BackendOffer back = dist::init_detail::decode_offer(dist::init_detail::encode(o));
    EXPECT_EQ(back.requested, o.requested);
    EXPECT_EQ(back.gpu, o.gpu);
    EXPECT_EQ(back.missing, o.missing);
  }
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
