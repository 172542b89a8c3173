// A worker for launcher_test: `worker MODE ARGS...` behaves as the test needs.
//   env                   print the launcher's variables, then a line without a newline
//   exit RANK CODE        rank RANK exits with CODE; the others sleep
//   kill RANK             rank RANK kills itself with SIGKILL; the others sleep
//   fail_first_run        rank 0 exits 3 on the first run (COLONY_RESTART_COUNT=0); all succeed after
//   abort_key             rank 1 exits 3; rank 0 waits for the store's abort flag and prints it
//   allreduce             init_process_group, all-reduce the rank, print the sum
//   sleep                 sleep 60 s
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "distributed/init.h"
#include "distributed/tcp_store.h"

namespace {
std::string env(const char* k) {
  const char* v = std::getenv(k);
  return v ? v : "<unset>";
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
  if (mode == "sleep") {
    sleep(60);
    return 0;
  }
  return 64;
}
