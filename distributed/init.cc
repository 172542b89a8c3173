#include "distributed/init.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "tensor/cuda.h"

namespace colony::dist {
namespace {

struct State {
  bool initialized = false;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
};

State& state() {
  static State s;
  return s;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0) {
    throw std::invalid_argument(std::string("init_process_group: environment variable ") + name + "=\"" + v +
                                "\" is not a non-negative integer");
  }
  return static_cast<int>(x);
}

}  // namespace

void init_process_group(const InitOptions& options) {
  State& s = state();
  if (s.initialized) throw std::logic_error("init_process_group: the default process group is already initialized");
  if (options.backend != "auto" && options.backend != "gloo" && options.backend != "nccl") {
    throw std::invalid_argument("init_process_group: unknown backend \"" + options.backend +
                                "\" (expected \"auto\", \"gloo\" or \"nccl\")");
  }
  int world = options.world_size >= 0 ? options.world_size : env_int("WORLD_SIZE", 1);
  int rank = options.rank >= 0 ? options.rank : env_int("RANK", 0);
  if (world < 1 || rank >= world) {
    throw std::invalid_argument("init_process_group: rank " + std::to_string(rank) + " is not valid for world size " +
                                std::to_string(world));
  }
  if (world > 1) {
    throw std::runtime_error("init_process_group: WORLD_SIZE=" + std::to_string(world) +
                             " asks for multi-process training, which this build of Colony does not support yet; "
                             "run a single process (unset WORLD_SIZE)");
  }
  s.rank = rank;
  s.world_size = world;
  s.local_rank = env_int("LOCAL_RANK", 0);
  s.initialized = true;
}

void destroy_process_group() { state() = State{}; }
bool is_initialized() { return state().initialized; }
int get_rank() { return state().rank; }
int get_world_size() { return state().world_size; }
int get_local_rank() { return state().initialized ? state().local_rank : env_int("LOCAL_RANK", 0); }
bool is_main_process() { return get_rank() == 0; }

Device local_device() {
  int n = cuda::device_count();
  if (n == 0) return kCPU;
  return Device::cuda(get_local_rank() % n);
}

void barrier() {}

}  // namespace colony::dist
