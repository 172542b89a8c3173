#include "distributed/init.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "distributed/backend_choice.h"
#include "distributed/comm/watchdog.h"
#include "distributed/comm/process_group_by_device.h"
#include "distributed/gloo/process_group_gloo.h"
#include "distributed/nccl/process_group_nccl.h"
#include "distributed/store/tcp_store.h"
#include "distributed/store/torch_tcp_store.h"
#include "log/trace.h"
#include "runtime/cuda.h"
#include "ops/raw_ops.h"

namespace colony::dist {
namespace {

struct State {
  bool initialized = false;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  bool hosts_store = false;
  std::shared_ptr<Store> store;
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

bool agent_store_flag() {
  const char* v = env("TORCHELASTIC_USE_AGENT_STORE");
  return v != nullptr && std::string(v) == "True";
}

// Which launcher started this process, as the variables it set say; for messages.
std::string detected_launcher() {
  if (env("TORCHELASTIC_RUN_ID") || env("TORCHELASTIC_USE_AGENT_STORE")) {
    return agent_store_flag() ? "torchrun (TORCHELASTIC_USE_AGENT_STORE=True: its agent hosts the store)" : "torchrun";
  }
  if (env("COLONY_JOB_TOKEN") || env("COLONY_STORE_HOSTED")) return "colonyrun";
  if (env("OMPI_COMM_WORLD_SIZE")) return "mpirun (Open MPI)";
  if (env("SLURM_PROCID")) return "srun (Slurm)";
  return "none (rank and world size from options or RANK/WORLD_SIZE set by hand)";
}

// How many times the launcher restarted the job's workers: colonyrun's count, else torchrun's.
int launcher_restart_count() { return env_int({"COLONY_RESTART_COUNT", "TORCHELASTIC_RESTART_COUNT"}, 0); }

// Where the job's store is and who hosts it: torchrun's agent (when it says so for this very
// address, as PyTorch's own rendezvous checks), colonyrun, or rank 0.
struct StorePlan {
  std::string host;
  int port;
  bool torchrun_agent;
  bool serve;         // this process hosts it
  std::string hosted;  // "hosted by rank 0", for messages
};

StorePlan plan_store(const std::string& host, int port, int rank) {
  StorePlan p{host, port, false, false, ""};
  const char* env_addr = env("MASTER_ADDR");
  const char* env_port = env("MASTER_PORT");
  p.torchrun_agent = agent_store_flag() && env_addr != nullptr && env_port != nullptr && host == env_addr &&
                     std::to_string(port) == env_port;
  if (p.torchrun_agent) {
    p.hosted = "hosted by torchrun's agent";
  } else if (env("COLONY_STORE_HOSTED")) {
    p.hosted = "hosted by colonyrun";
  } else {
    p.serve = rank == 0;
    p.hosted = "hosted by rank 0";
  }
  return p;
}

// A connection to the planned store. Under torchrun every key goes under colony/attempt_<N>/:
// the agent's store outlives a restart of the workers, and a new attempt must not see the last
// one's abort flag or rendezvous keys.
std::shared_ptr<Store> connect_store(const StorePlan& p, bool serve, std::chrono::milliseconds timeout,
                                     int* port_out) {
  if (p.torchrun_agent) {
    TorchTCPStoreOptions o;
    o.host = p.host;
    o.port = p.port;
    o.timeout = timeout;
    o.description = "the job's store (" + p.hosted + ")";
    *port_out = p.port;
    return std::make_shared<PrefixStore>("colony/attempt_" + std::to_string(launcher_restart_count()),
                                         std::make_shared<TorchTCPStore>(o));
  }
  TCPStoreOptions o;
  o.host = p.host;
  o.port = p.port;
  o.is_server = serve;
  o.timeout = timeout;
  o.description = "the job's store (" + p.hosted + ")";
  auto store = std::make_shared<TCPStore>(o);
  *port_out = store->port();
  return store;
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
// failed because peers were lost, or timed out because peers stopped making progress, blames
// them: theirs is the job's first failure, this rank's the consequence (and the launcher reports
// the abort flag's rank as the one that failed first).
std::string failure_report(int rank, std::exception_ptr e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const StalledRanksError& t) {
    // Alive but stuck elsewhere: they stopped the job, not this rank's timeout.
    return t.stall() + " (seen by rank " + std::to_string(rank) + ": " + t.timeout() + ")";
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
  const int generation = launcher_restart_count();
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

// What this rank offers to the backend decision: the GPU it uses (its UUID), or why it has none.
init_detail::BackendOffer offer_of_this_rank(const std::string& requested, bool nccl_built, int gpus, int device) {
  init_detail::BackendOffer o;
  o.requested = requested;
  if (!nccl_built) {
    o.missing = "built without CUDA";
  } else if (gpus == 0) {
    o.missing = cuda::unavailable_reason();
  } else {
    o.gpu = cuda::device_uuid(device);
  }
  return o;
}

// The backend of the whole job (backend_choice.h): every rank sets its offer under its own key,
// rank 0 reads them all, decides and publishes the decision ("nccl", "gloo", or "!" and the
// error every rank then throws), which every rank reads. One key per rank and one read each, so
// the store's load grows with the world size, not its square. The n-th init_process_group of a
// rank meets the n-th of the others (a store colonyrun hosts outlives a destroy_process_group).
std::string agree_on_backend(Store& store, int generation, int rank, int world,
                             const init_detail::BackendOffer& offer) {
  const auto bytes = [](const std::string& s) { return Bytes(s.begin(), s.end()); };
  const auto text = [](const Bytes& b) { return std::string(b.begin(), b.end()); };
  try {
    const std::string gen = "colony/gen" + std::to_string(generation) + "/backend/";
    const int64_t round = store.add(gen + "rounds_of_rank_" + std::to_string(rank), 1);
    const std::string prefix = gen + "round" + std::to_string(round) + "/";
    store.set(prefix + "offer" + std::to_string(rank), bytes(init_detail::encode(offer)));
    if (rank == 0) {
      std::vector<init_detail::BackendOffer> offers;
      for (int r = 0; r < world; ++r)
        offers.push_back(init_detail::decode_offer(text(store.get(prefix + "offer" + std::to_string(r)))));
      std::string decision;
      try {
        const init_detail::BackendChoice choice = init_detail::choose_backend(offers);
        decision = choice.backend;
        if (offer.requested == "auto" && !choice.why.empty() && !offer.gpu.empty())
          std::fprintf(stderr, "[rank 0] colony: backend \"auto\" chose Gloo for CUDA tensors: %s\n",
                       choice.why.c_str());
      } catch (const std::invalid_argument& e) {
        decision = std::string("!") + e.what();
      }
      store.set(prefix + "choice", bytes(decision));
    }
    const std::string decision = text(store.get(prefix + "choice"));
    if (!decision.empty() && decision[0] == '!') throw std::invalid_argument(decision.substr(1));
    return decision;
  } catch (const TimeoutError& e) {
    throw TimeoutError("init_process_group: rank " + std::to_string(rank) +
                       " waited in vain for every rank to say which GPU it uses (is every rank started?): " + e.what());
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
  // One GPU per local rank, made current before anything creates a CUDA context (which would land
  // on GPU 0 for every rank of the machine). A process the launcher gave its own GPU
  // (CUDA_VISIBLE_DEVICES per rank, Slurm's --gpus-per-task=1) sees just that one: cuda:0.
  const int gpus = cuda::device_count();
  const int device = init_detail::local_gpu(local_rank, gpus);
  if (gpus > 0) cuda::set_device(device);
  const bool nccl_built = nccl_detail::real_nccl_runtime() != nullptr;
  if (options.backend == "nccl" && (!nccl_built || gpus == 0))
    throw std::invalid_argument("init_process_group: backend \"nccl\" needs a CUDA device and a CUDA build (" +
                                (nccl_built ? cuda::unavailable_reason() : std::string("built without CUDA")) +
                                "); use backend \"gloo\"");
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
          " needs the address of rank 0's store: set MASTER_ADDR and MASTER_PORT (colonyrun and torchrun set them; "
          "with mpirun or srun export them yourself) [launcher detected: " + detected_launcher() + "]");
    }
    const int generation = launcher_restart_count();
    const StorePlan plan = plan_store(addr, port, rank);
    int store_port = port;
    try {
      fresh.store = connect_store(plan, plan.serve, options.timeout, &store_port);
    } catch (const StoreError& e) {
      throw StoreError(std::string("init_process_group: ") + e.what() + " [launcher detected: " + detected_launcher() +
                       "]");
    }
    fresh.hosts_store = plan.serve;
    export_env("MASTER_ADDR", addr);
    export_env("MASTER_PORT", std::to_string(store_port));
    const std::string where = addr + ":" + std::to_string(store_port) + " (" + plan.hosted + ")";

    // Whether every rank has a GPU of its own is known only from all of them together: fewer GPUs
    // in this process than ranks on its machine is the usual per-rank isolation, or real sharing.
    const std::string backend = agree_on_backend(
        *fresh.store, generation, rank, world, offer_of_this_rank(options.backend, nccl_built, gpus, device));

    ProcessGroupOptions po;
    po.timeout = options.timeout;
    auto group_store =
        std::make_shared<PrefixStore>("colony/gen" + std::to_string(generation) + "/pg", fresh.store);
    fresh.group = std::make_shared<ProcessGroupGloo>(group_store, rank, world, po);
    if (backend == "nccl") {
      ProcessGroupNCCLOptions no;
      no.timeout = options.timeout;
      no.device = device;
      no.generation = generation;
      auto nccl = std::make_shared<ProcessGroupNCCL>(fresh.store, rank, world, no);
      fresh.group = std::make_shared<ProcessGroupByDevice>(fresh.group, nccl);
    }

    // The watchdog talks to the store on its own connection, so it never waits behind a blocking
    // get of the training thread.
    StorePlan watched = plan;
    watched.port = store_port;
    int unused_port = 0;
    std::shared_ptr<Store> watchdog_store = connect_store(watched, false, std::chrono::seconds(10), &unused_port);
    WatchdogOptions w;
    w.store_description = where;
    if (const char* v = env("COLONY_HEARTBEAT_TIMEOUT_MS"))
      w.heartbeat_timeout = std::chrono::milliseconds(parse_int("COLONY_HEARTBEAT_TIMEOUT_MS", v));
    fresh.watchdog = std::make_shared<Watchdog>(watchdog_store, fresh.group, rank, world, generation, w);
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

int restart_count() { return launcher_restart_count(); }

Device local_device() {
  int n = cuda::device_count();
  if (n == 0) return kCPU;
  return Device::cuda(get_local_rank() % n);
}

Device device_for_rank(const std::string& spec, int local_rank, int gpus) {
  if (spec == "auto") return gpus > 0 ? Device::cuda(local_rank % gpus) : kCPU;
  if (spec != "cuda") return Device(spec);
  if (gpus == 0)
    throw std::invalid_argument("device \"cuda\" asked for, but this machine has no CUDA device (" +
                                cuda::unavailable_reason() + "); use --device cpu or auto");
  return Device::cuda(local_rank % gpus);
}

Device device_for_rank(const std::string& spec) {
  return device_for_rank(spec, get_local_rank(), cuda::device_count());
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
