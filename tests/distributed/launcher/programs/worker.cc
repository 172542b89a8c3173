// A worker for launcher_test: `worker MODE ARGS...` behaves as the test needs.
//   env                   print the launcher's variables, then a line without a newline
//   exit RANK CODE        rank RANK exits with CODE; the others sleep
//   kill RANK             rank RANK kills itself with SIGKILL; the others sleep
//   fail_first_run        rank 0 exits 3 on the first run (COLONY_RESTART_COUNT=0); all succeed after
//   abort_key             rank 1 exits 3; rank 0 waits for the store's abort flag and prints it
//   allreduce             init_process_group, all-reduce the rank, print the sum
//   train CKPT FAIL_STEP  DDP + SGD on a small model for 12 steps, rank 0 checkpointing to CKPT
//                         after each; on the first run rank 1 exits 3 before step FAIL_STEP (-1:
//                         never); a restarted run resumes from CKPT. Prints the final weights.
//   stop RANK             all-reduce in a loop; rank RANK prints "stopping pid P" and stops
//                         itself with SIGSTOP after 1 s (the others go on, 60 s at most)
//   fds                   print the sockets and pipes it inherited ("inherited: ..."), then after
//                         init_process_group those a program it starts inherits ("passed on: ...")
//   sleep                 sleep 60 s
//   detach                start `sleep 30` in a session of its own (setsid) holding this worker's
//                         stdout, print "detached pid P", exit 0
//   leak_outbox           create a shared-memory outbox, print "outbox NAME", kill itself (SIGKILL)
//                         before unlinking it
//   block RANK            all-reduce in a loop with a 2 s collective timeout; rank RANK prints
//                         "blocking" and sleeps 60 s after 1 s (its watchdog still beats)
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "distributed/comm/shm_outbox.h"
#include "distributed/ddp/ddp.h"
#include "distributed/init.h"
#include "distributed/store/tcp_store.h"
#include "nn/functional.h"
#include "nn/linear.h"
#include "optim/checkpoint.h"
#include "optim/sgd.h"
#include "tensor/random.h"
#include "tests/descriptors.h"
#include "ops/raw_ops.h"

namespace {
std::string env(const char* k) {
  const char* v = std::getenv(k);
  return v ? v : "<unset>";
}
// What a program run under --max_restarts does: checkpoint as it goes, resume when restarted.
int train(int rank, const std::string& ckpt, int fail_step) {
  using namespace colony;
  const bool restarted = dist::restart_count() > 0;
  dist::init_process_group();
  manual_seed(5);
  auto model = std::make_shared<nn::Linear>(6, 3);
  auto ddp = std::make_shared<dist::DistributedDataParallel>(model);
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  int64_t start = 0;
  if (restarted && ::access(ckpt.c_str(), F_OK) == 0) {
    start = optim::load_checkpoint(ckpt, *model, opt).step;
    if (rank == 0) std::printf("resumed at step %lld\n", static_cast<long long>(start));
  }
  for (int64_t step = start; step < 12; ++step) {
    if (!restarted && rank == 1 && step == fail_step) std::exit(3);
    // Each rank's batch depends only on (step, rank), so a resumed run sees the same data.
    Generator g(static_cast<uint64_t>(1000 * step + rank));
    Tensor x = raw::randn({8, 6}, {}, &g);
    Tensor y = raw::randint(0, 3, {8}, TensorOptions(kInt64), &g);
    opt.zero_grad();
    F::cross_entropy(ddp->forward(x), y).backward();
    opt.step();
    if (rank == 0) {
      optim::TrainingState s;
      s.step = step + 1;
      optim::save_checkpoint(ckpt, *model, opt, s);
    }
    dist::barrier();  // the checkpoint of this step exists before anyone takes the next
  }
  Tensor w = model->weight.contiguous().to(kFloat64);
  std::printf("weights:");
  for (int64_t i = 0; i < w.numel(); ++i) std::printf(" %.9g", w.data_ptr<double>()[i]);
  std::printf("\n");
  dist::destroy_process_group();
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  const std::string mode = argv[1];
  const int rank = std::atoi(env("RANK").c_str());
  if (mode == "env") {
    for (const char* k : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
                          "MASTER_PORT", "COLONY_STORE_HOSTED", "COLONY_NUM_THREADS", "COLONY_RESTART_COUNT"})
      std::printf("%s=%s\n", k, env(k).c_str());
    std::printf("token_set=%d\n", env("COLONY_JOB_TOKEN") != "<unset>" && !env("COLONY_JOB_TOKEN").empty());
    std::fprintf(stderr, "to stderr\n");
    std::printf("no newline at the end");
    return 0;
  }
  if (mode == "exit" && argc == 4) {
    if (rank == std::atoi(argv[2])) {
      usleep(200000);
      return std::atoi(argv[3]);
    }
    sleep(60);
    return 0;
  }
  if (mode == "kill" && argc == 3) {
    if (rank == std::atoi(argv[2])) {
      usleep(200000);
      raise(SIGKILL);
    }
    sleep(60);
    return 0;
  }
  if (mode == "fail_first_run") {
    if (rank == 0 && env("COLONY_RESTART_COUNT") == "0") return 3;
    std::printf("run %s ok\n", env("COLONY_RESTART_COUNT").c_str());
    return 0;
  }
  if (mode == "abort_key") {
    if (rank == 1) {
      usleep(200000);
      return 3;
    }
    signal(SIGTERM, SIG_IGN);  // outlive the launcher's SIGTERM long enough to report the flag
    colony::dist::TCPStoreOptions o;
    o.host = env("MASTER_ADDR");
    o.port = std::atoi(env("MASTER_PORT").c_str());
    o.timeout = std::chrono::seconds(10);
    colony::dist::TCPStore store(o);
    std::printf("abort flag: %s\n", store.get_string("colony/abort").c_str());
    std::fflush(stdout);
    sleep(60);
    return 0;
  }
  if (mode == "allreduce") {
    colony::dist::init_process_group();
    double sum = colony::dist::all_reduce(static_cast<double>(rank), colony::dist::ReduceOp::kSum);
    std::printf("world=%d sum=%g\n", colony::dist::get_world_size(), sum);
    colony::dist::destroy_process_group();
    return 0;
  }
  if (mode == "train" && argc == 4) return train(rank, argv[2], std::atoi(argv[3]));
  if (mode == "fail_rank" && argc == 3) {  // that rank exits with 3 once all have joined; the rest go on
    colony::dist::init_process_group();
    colony::dist::barrier();
    if (rank == std::atoi(argv[2])) return 3;
    for (;;) colony::dist::all_reduce(1.0);
  }
  if (mode == "stop" && argc == 3) {
    colony::dist::init_process_group();
    // Stop once the watchdogs have seen each other beat (every 200 ms): a rank that never beat
    // is not taken for dead.
    const auto start = std::chrono::steady_clock::now();
    const auto end = start + std::chrono::seconds(60);
    bool stopped = false;
    while (std::chrono::steady_clock::now() < end) {
      colony::dist::all_reduce(1.0);
      if (!stopped && rank == std::atoi(argv[2]) && std::chrono::steady_clock::now() - start > std::chrono::seconds(1)) {
        stopped = true;
        std::printf("stopping pid %d\n", static_cast<int>(getpid()));
        std::fflush(stdout);
        raise(SIGSTOP);
      }
    }
    colony::dist::destroy_process_group();
    return 0;
  }
  if (mode == "fds") {
    std::printf("inherited:%s\n", colony::testing::sockets_and_pipes_held().c_str());
    colony::dist::init_process_group();
    colony::dist::barrier();
    std::printf("passed on:%s\n", colony::testing::sockets_and_pipes_a_child_inherits().c_str());
    colony::dist::destroy_process_group();
    return 0;
  }
  if (mode == "sleep") {
    sleep(60);
    return 0;
  }
  if (mode == "detach") {
    const pid_t child = fork();
    if (child == 0) {
      setsid();
      execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
      _exit(127);
    }
    std::printf("detached pid %d\n", static_cast<int>(child));
    std::fflush(stdout);
    return 0;
  }
  if (mode == "leak_outbox") {
    auto outbox = colony::dist::comm_detail::SharedOutbox::create(4096, 1);
    std::printf("outbox %s\n", outbox->name().c_str());
    std::fflush(stdout);
    raise(SIGKILL);
  }
  if (mode == "block" && argc == 3) {
    colony::dist::init_process_group();
    colony::dist::default_process_group()->set_timeout(std::chrono::seconds(2));
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
      colony::dist::all_reduce(1.0);
      if (rank == std::atoi(argv[2]) && std::chrono::steady_clock::now() - start > std::chrono::seconds(1)) {
        std::printf("blocking\n");
        std::fflush(stdout);
        sleep(60);
      }
    }
    colony::dist::destroy_process_group();
    return 0;
  }
  return 64;
}
