#include "distributed/init.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "distributed/comm/watchdog.h"
#include "distributed/gloo/process_group_gloo.h"
#include "distributed/store/tcp_store.h"
#include "log/trace.h"
#include "tensor/cuda.h"
#include "tensor/raw_ops.h"

namespace colony::dist {
namespace {

struct State {
  bool initialized = false;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  bool hosts_store = false;
  std::shared_ptr<TCPStore> store;
  std::shared_ptr<ProcessGroup> group;
  std::shared_ptr<Watchdog> watchdog;
  std::terminate_handler previous_terminate = nullptr;
};

State& state() {
  static State* s = new State;  // never destroyed: the terminate handler may run during exit
  return *s;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

int parse_int(const char* name, const char* v) {
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0) {
    throw std::invalid_argument(std::string("init_process_group: environment variable ") + name + "=\"" + v +
                                "\" is not a non-negative integer");
  }
  return static_cast<int>(x);
}

// The first of `names` that is set, parsed; else `fallback`.
int env_int(std::initializer_list<const char*> names, int fallback) {
  for (const char* n : names)
    if (const char* v = env(n)) return parse_int(n, v);
  return fallback;
}

std::string exception_message(std::exception_ptr e) {
  if (!e) return "unknown error";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "a non-standard exception";
  }
}

// What this rank tells the others (the job's abort flag) when `e` ends it. A collective that
// failed because peers were lost blames them: their loss is the job's first failure, this rank's
// the consequence (and the launcher reports the abort flag's rank as the one that failed first).
std::string failure_report(int rank, std::exception_ptr e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const CollectiveError& c) {
    if (!c.unreachable().empty())
      return unreachable_phrase(c.unreachable()) + " (seen by rank " + std::to_string(rank) + ": " + c.what() + ")";
  } catch (...) {
  }
  return "rank " + std::to_string(rank) + " failed: " + exception_message(e);
}

// An exception escaping main (or any thread) ends the process through std::terminate: tell the
// other ranks first, so they stop at once instead of timing out.
[[noreturn]] void terminate_handler() {
  State& s = state();
  if (s.watchdog) s.watchdog->report_failure(failure_report(s.rank, std::current_exception()));
  if (s.previous_terminate) s.previous_terminate();
  std::abort();
}

// A program that returns from main without destroy_process_group has still finished in order.
void leave_at_exit() {
  State& s = state();
  if (s.watchdog) s.watchdog->mark_left();
}

// The store lives in rank 0's process: keep it up until every other rank has left (or stopped
// beating: it died), or they would lose it in the middle of their last steps.
void wait_for_others_to_leave(State& s) {
  using Clock = std::chrono::steady_clock;
  const int generation = env_int({"COLONY_RESTART_COUNT"}, 0);
  const auto silence = std::chrono::seconds(5);
  for (int r = 0; r < s.world_size; ++r) {
    if (r == s.rank) continue;
    int64_t beats = -1;
    auto changed = Clock::now();
    try {
      while (!s.store->check({abort_key()}) && !s.store->check({left_key(generation, r)})) {
        const int64_t now_beats = s.store->add(heartbeat_key(generation, r), 0);
        if (now_beats != beats) {
          beats = now_beats;
          changed = Clock::now();
        } else if (Clock::now() - changed > silence) {
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    } catch (const std::exception&) {
      return;
    }
  }
}

}  // namespace

void init_process_group(const InitOptions& options) {
  State& s = state();
  if (s.initialized) throw std::logic_error("init_process_group: the default process group is already initialized");
  if (options.backend != "auto" && options.backend != "gloo" && options.backend != "nccl") {
    throw std::invalid_argument("init_process_group: unknown backend \"" + options.backend +
                                "\" (expected \"auto\", \"gloo\" or \"nccl\")");
  }
  if (options.backend == "nccl") {
    throw std::invalid_argument(
        "init_process_group: the NCCL backend is not part of this build yet; use backend \"gloo\" (or \"auto\"), "
        "which reduces CUDA tensors through host memory");
  }
  const int world = options.world_size >= 0
                        ? options.world_size
                        : env_int({"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"}, 1);
  const int rank = options.rank >= 0 ? options.rank : env_int({"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"}, 0);
  if (world < 1 || rank >= world) {
    throw std::invalid_argument("init_process_group: rank " + std::to_string(rank) + " is not valid for world size " +
                                std::to_string(world) + " (expected 0 <= rank < world size)");
  }
  const int local_rank = env_int({"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}, 0);
  const int local_world =
      env_int({"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"}, world == 1 ? 1 : 0);
  // From here on the process looks launched by torchrun whatever launched it (mpirun, srun, the
  // options): code that reads RANK and WORLD_SIZE by itself (DistributedSampler's defaults, the
  // trace file's name, the Gloo transport's MASTER_ADDR) agrees with this group.
  const auto export_env = [](const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); };
  export_env("RANK", std::to_string(rank));
  export_env("WORLD_SIZE", std::to_string(world));
  export_env("LOCAL_RANK", std::to_string(local_rank));
  export_env("LOCAL_WORLD_SIZE", std::to_string(local_world > 0 ? local_world : 1));

  State fresh;
  fresh.rank = rank;
  fresh.world_size = world;
  fresh.local_rank = local_rank;
  fresh.local_world_size = local_world > 0 ? local_world : 1;
  if (world > 1) {
    const std::string addr = !options.master_addr.empty() ? options.master_addr
                             : env("MASTER_ADDR")          ? env("MASTER_ADDR")
                                                           : "";
    const int port = options.master_port >= 0 ? options.master_port : env_int({"MASTER_PORT"}, -1);
    if (addr.empty() || port < 0) {
      throw std::invalid_argument(
          "init_process_group: world size " + std::to_string(world) +
          " needs the address of rank 0's store: set MASTER_ADDR and MASTER_PORT (colonyrun sets them; "
          "with mpirun or srun export them yourself)");
    }
    const int generation = env_int({"COLONY_RESTART_COUNT"}, 0);
    TCPStoreOptions so;
    so.host = addr;
    so.port = port;
    so.is_server = rank == 0 && env("COLONY_STORE_HOSTED") == nullptr;
    so.timeout = options.timeout;
    fresh.hosts_store = so.is_server;
    fresh.store = std::make_shared<TCPStore>(so);
    export_env("MASTER_ADDR", addr);
    export_env("MASTER_PORT", std::to_string(fresh.store->port()));
    const std::string where = addr + ":" + std::to_string(fresh.store->port()) +
                              (env("COLONY_STORE_HOSTED") ? " (hosted by colonyrun)" : " (hosted by rank 0)");

    ProcessGroupOptions po;
    po.timeout = options.timeout;
    auto group_store =
        std::make_shared<PrefixStore>("colony/gen" + std::to_string(generation) + "/pg", fresh.store);
    fresh.group = std::make_shared<ProcessGroupGloo>(group_store, rank, world, po);

    // The watchdog talks to the store on its own connection, so it never waits behind a blocking
    // get of the training thread.
    TCPStoreOptions wo = so;
    wo.is_server = false;
    wo.port = fresh.store->port();
    wo.timeout = std::chrono::seconds(10);
    WatchdogOptions w;
    w.store_description = where;
    if (const char* v = env("COLONY_HEARTBEAT_TIMEOUT_MS"))
      w.heartbeat_timeout = std::chrono::milliseconds(parse_int("COLONY_HEARTBEAT_TIMEOUT_MS", v));
    fresh.watchdog = std::make_shared<Watchdog>(std::make_shared<TCPStore>(wo), fresh.group, rank, world, generation, w);
    fresh.group->set_failure_monitor(fresh.watchdog);
  }
  fresh.initialized = true;
  s = std::move(fresh);
  if (s.watchdog) {
    s.previous_terminate = std::set_terminate(terminate_handler);
    static bool registered = false;
    if (!registered) {
      registered = true;
      std::atexit(leave_at_exit);
    }
  }
}

void destroy_process_group() {
  State& s = state();
  if (!s.initialized) return;
  if (s.watchdog) {
    // Called from a catch block: this rank is going down because of that exception.
    if (std::exception_ptr e = std::current_exception()) {
      s.watchdog->report_failure(failure_report(s.rank, e));
    }
    s.watchdog->mark_left();
    s.watchdog->stop();
    // The store lives in this process: keep it up until every rank has left (or the job aborted),
    // or the others would lose it in the middle of their last steps.
    if (s.hosts_store) wait_for_others_to_leave(s);
    std::set_terminate(s.previous_terminate);
  }
  trace::flush();
  // The group before the store it rendezvoused through.
  s.watchdog.reset();
  s.group.reset();
  s.store.reset();
  s = State{};
}

bool is_initialized() { return state().initialized; }
int get_rank() { return state().rank; }
int get_world_size() { return state().world_size; }
int get_local_rank() {
  return state().initialized ? state().local_rank : env_int({"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}, 0);
}
int get_local_world_size() { return state().local_world_size; }
bool is_main_process() { return get_rank() == 0; }

int restart_count() {
  const char* v = std::getenv("COLONY_RESTART_COUNT");
  return v != nullptr ? std::atoi(v) : 0;
}

Device local_device() {
  int n = cuda::device_count();
  if (n == 0) return kCPU;
  return Device::cuda(get_local_rank() % n);
}

std::shared_ptr<ProcessGroup> default_process_group() { return state().group; }
std::shared_ptr<Store> default_store() { return state().store; }

void wait_and_explain(const std::shared_ptr<Work>& work) {
  if (auto g = state().group) {
    g->wait_and_explain(work);
  } else {
    work->wait();
  }
}

void barrier() {
  if (auto g = state().group) wait_and_explain(g->barrier());
}

void all_reduce(Tensor& tensor, ReduceOp op) {
  if (auto g = state().group) wait_and_explain(g->allreduce(tensor, op));
}

void broadcast(Tensor& tensor, int root) {
  if (auto g = state().group) wait_and_explain(g->broadcast(tensor, root));
}

double all_reduce(double value, ReduceOp op) {
  auto g = state().group;
  if (!g) return value;
  Tensor t = raw::from_vector(std::vector<double>{value}, {1});
  wait_and_explain(g->allreduce(t, op));
  return t.data_ptr<double>()[0];
}

}  // namespace colony::dist
