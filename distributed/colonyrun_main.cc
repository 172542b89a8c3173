// colonyrun [--nproc_per_node=N|auto] [--nnodes=M] [--node_rank=K] [--master_addr=A]
//           [--master_port=P|0] [--max_restarts=R] [--log_dir=D] PROGRAM ARGS...
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "distributed/launcher/grace.h"
#include "distributed/launcher/launcher.h"

int main(int argc, char** argv) {
  colony::dist::LaunchOptions o;
  std::string nproc = "1";
  std::string grace = "5";
  CLI::App app{
      "colonyrun: start PROGRAM once per local rank with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, "
      "MASTER_PORT (torchrun's variables) and supervise it: the first failure stops the whole job."};
  app.add_option("--nproc_per_node", nproc, "workers on this node: a number, or auto (one per GPU, else 1)");
  app.add_option("--nnodes", o.nnodes, "nodes in the job");
  app.add_option("--node_rank", o.node_rank, "this node's index, 0..nnodes-1 (node 0 hosts the store)");
  app.add_option("--master_addr", o.master_addr, "address of node 0");
  app.add_option("--master_port", o.master_port, "port of the job's store on node 0 (0: pick a free one, one node)");
  app.add_option("--max_restarts", o.max_restarts, "restart the whole group (every node) this many times after a failure");
  app.add_option("--log_dir", o.log_dir, "write each rank's output to LOG_DIR/rank_<R>.log instead of prefixing it");
  app.add_option("--grace", grace, "seconds between SIGTERM and SIGKILL when stopping workers (0 to 86400)");
  std::string program;
  app.add_option("program", program, "PROGRAM (its arguments follow it)")->required();
  // Everything after PROGRAM belongs to it, flags included.
  app.prefix_command();
  CLI11_PARSE(app, argc, argv);
  o.command.push_back(program);
  for (const auto& extra : app.remaining()) o.command.push_back(extra);
  try {
    if (nproc == "auto") {
      o.nproc_per_node = 0;
    } else {
      size_t used = 0;
      o.nproc_per_node = std::stoi(nproc, &used);
      if (used != nproc.size() || o.nproc_per_node < 1) throw std::invalid_argument("");
    }
  } catch (const std::exception&) {
    std::fprintf(stderr, "colonyrun: --nproc_per_node must be a positive number or auto, got \"%s\"\n", nproc.c_str());
    return 2;
  }
  try {
    o.grace = colony::dist::parse_grace(grace);
    return colony::dist::launch(o);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "colonyrun: %s\n", e.what());
    return 1;
  }
}
