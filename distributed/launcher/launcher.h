// colonyrun: starts and supervises the worker processes of one node, the way torchrun does.
//
// Node 0's launcher hosts the job's TCPStore at master_addr:master_port (port 0: a free one,
// passed on in MASTER_PORT); launchers of other nodes join it and agree on the world size. Each
// worker gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR,
// MASTER_PORT, COLONY_JOB_TOKEN, COLONY_STORE_HOSTED=1, COLONY_NUM_THREADS and
// COLONY_RESTART_COUNT. Output lines are prefixed "[rank R] " (or go to log_dir/rank_R.log).
//
// The first worker to fail (non-zero exit or a signal) sets the store's abort flag with a
// message naming it (the other ranks' watchdogs stop them at once, on every node), the other
// local workers get SIGTERM and, after `grace`, SIGKILL; the launcher says which rank failed first
// and why, and exits with that worker's code (128 + signal for a signal). SIGINT/SIGTERM to the
// launcher reach every worker, and an interrupted job never ends with status 0: the launcher exits
// 128 + signal (143 for SIGTERM, 130 for SIGINT) whenever the signal came. With max_restarts > 0
// the whole group (every node's workers) starts again, and programs resume from their last checkpoint.
//
// Once every worker has exited, the launcher reads what is left in their pipes for at most 3 s: a
// process a worker started outside its process group (setsid) may hold a pipe open for ever.
// Workers get COLONY_JOB_ID, which names their shared-memory segments (comm/shm_names.h); after
// each generation the launcher removes those its exited workers left in /dev/shm (a rank killed
// during set-up), and at start those of earlier jobs' dead processes (60 s old or more).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace colony::dist {

struct LaunchOptions {
  int nproc_per_node = 1;  // 0 = auto: one per GPU under /proc/driver/nvidia/gpus, else 1
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;  // 0: node 0 picks a free port (single node only)
  int max_restarts = 0;
  std::string log_dir;  // "": prefix lines on the launcher's own stdout/stderr
  std::chrono::milliseconds grace{std::chrono::seconds(5)};
  std::vector<std::string> command;  // program and its arguments
};

// Validates the options (std::invalid_argument with what was wrong) and resolves auto.
LaunchOptions resolve(LaunchOptions options);

// Runs the job's workers of this node to the end; returns the launcher's exit status.
int launch(const LaunchOptions& options);

}  // namespace colony::dist
