#include "distributed/launcher/launcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

#include "distributed/comm/shm_names.h"
#include "distributed/store/tcp_store.h"

namespace colony::dist {
namespace {

using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_signal = 0;
void on_signal(int s) { g_signal = s; }

int count_gpus() {
  DIR* d = opendir("/proc/driver/nvidia/gpus");
  if (d == nullptr) return 0;
  int n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

bool executable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Where execvp would find `program`, or "".
std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return executable(program) ? program : "";
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

std::string random_token() {
  unsigned char b[16] = {};
  std::ifstream f("/dev/urandom", std::ios::binary);
  f.read(reinterpret_cast<char*>(b), sizeof(b));
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned char c : b) {
    s += hex[c >> 4];
    s += hex[c & 15];
  }
  return s;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "was killed by signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "ended with status " + std::to_string(status);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

bool failed(int status) { return !(WIFEXITED(status) && WEXITSTATUS(status) == 0); }

// One worker's stream (stdout or stderr): complete lines are forwarded with the rank prefix.
struct Stream {
  int fd = -1;
  std::string partial;
  FILE* sink = nullptr;  // stdout/stderr of the launcher, or the rank's log file
  std::string prefix;

  void emit(const std::string& line) {
    std::fwrite(prefix.data(), 1, prefix.size(), sink);
    std::fwrite(line.data(), 1, line.size(), sink);
    std::fputc('\n', sink);
    std::fflush(sink);
  }
  // Forwards a last line without its newline, and closes the pipe.
  void close_stream() {
    if (!partial.empty()) emit(partial);
    partial.clear();
    close(fd);
    fd = -1;
  }
  // Reads what is there (at most 8 KiB) and forwards the complete lines. False at end of stream
  // (the pipe is then closed) and when there was nothing to read.
  bool pump() {
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return false;
    if (n <= 0) {
      close_stream();
      return false;
    }
    partial.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = partial.find('\n')) != std::string::npos) {
      emit(partial.substr(0, nl));
      partial.erase(0, nl + 1);
    }
    return true;
  }
};

struct Worker {
  int rank = 0, local_rank = 0;
  pid_t pid = -1;
  Stream out, err;
  FILE* log = nullptr;
  bool done = false;
  int status = 0;
};

struct Job {
  int world_size = 0;
  int rank_offset = 0;
  int port = 0;
  std::string token;
  std::string id;  // COLONY_JOB_ID: names the workers' shared-memory segments (comm/shm_names.h)
};

std::vector<char*> as_argv(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

void spawn(Worker& w, const LaunchOptions& o, const Job& job, int restart) {
  int out_pipe[2], err_pipe[2];
  // Close-on-exec: each worker gets only its own two ends (as 1 and 2), not its siblings'.
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("colonyrun: pipe() failed");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::string threads = std::to_string(std::max(1u, cores / static_cast<unsigned>(o.nproc_per_node)));
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("colonyrun: fork() failed: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so stopping it stops what it started too
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[0]);
    close(err_pipe[1]);
    auto set = [](const char* k, const std::string& v) { setenv(k, v.c_str(), 1); };
    set("RANK", std::to_string(w.rank));
    set("LOCAL_RANK", std::to_string(w.local_rank));
    set("WORLD_SIZE", std::to_string(job.world_size));
    set("LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node));
    set("GROUP_RANK", std::to_string(o.node_rank));
    set("MASTER_ADDR", o.master_addr);
    set("MASTER_PORT", std::to_string(job.port));
    set("COLONY_JOB_TOKEN", job.token);
    set("COLONY_JOB_ID", job.id);
    set("COLONY_STORE_HOSTED", "1");
    set("COLONY_RESTART_COUNT", std::to_string(restart));
    if (std::getenv("COLONY_NUM_THREADS") == nullptr) set("COLONY_NUM_THREADS", threads);
    auto argv = as_argv(o.command);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "colonyrun: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  close(out_pipe[1]);
  close(err_pipe[1]);
  w.pid = pid;
  w.done = false;
  w.status = 0;
  w.out = Stream{out_pipe[0], "", stdout, "[rank " + std::to_string(w.rank) + "] "};
  w.err = Stream{err_pipe[0], "", stderr, "[rank " + std::to_string(w.rank) + "] "};
  if (!o.log_dir.empty()) {
    const std::string path = o.log_dir + "/rank_" + std::to_string(w.rank) + ".log";
    if (w.log == nullptr) w.log = std::fopen(path.c_str(), "ae");
    if (w.log == nullptr) throw std::runtime_error("colonyrun: cannot write " + path + ": " + std::strerror(errno));
    w.out.sink = w.err.sink = w.log;
    w.out.prefix = w.err.prefix = "";
  }
  fcntl(w.out.fd, F_SETFL, O_NONBLOCK);
  fcntl(w.err.fd, F_SETFL, O_NONBLOCK);
}

// How long the launcher reads the workers' pipes once every worker has exited. What a worker wrote
// is in its pipe when it exits and takes milliseconds to read; a pipe still open after that is held
// by a process the worker started outside its process group (setsid, a daemon), which may hold it
// for ever: reading it used to spin at full CPU, deaf to SIGTERM, until that process ended.
constexpr std::chrono::seconds kDrainLimit{3};

// Forwards what is left in the workers' pipes: polls (never spins) until every stream ends,
// kDrainLimit passes, or a signal comes; then closes what is still open, saying whose it was.
void drain(std::vector<Worker>& workers) {
  const auto give_up = Clock::now() + kDrainLimit;
  std::vector<pollfd> fds;
  std::vector<Stream*> streams;
  for (bool last_round = false; !last_round;) {
    fds.clear();
    streams.clear();
    for (auto& w : workers)
      for (Stream* s : {&w.out, &w.err})
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          streams.push_back(s);
        }
    if (fds.empty()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - Clock::now()).count();
    // After a signal (which interrupts poll at once) or the limit: only what is already there.
    last_round = g_signal != 0 || left <= 0;
    const int wait_ms = last_round ? 0 : static_cast<int>(std::min<long long>(left, 100));
    if (poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) break;
    for (size_t i = 0; i < fds.size(); ++i) {
      // Up to 64 reads (512 KiB) per stream and round, so a writer that never stops cannot hold
      // the loop past its limit.
      for (int reads = 0; fds[i].revents != 0 && reads < 64 && streams[i]->pump(); ++reads) {
      }
    }
  }
  for (auto& w : workers) {
    if ((w.out.fd >= 0 || w.err.fd >= 0) && g_signal == 0) {
      std::fprintf(stderr,
                   "colonyrun: rank %d exited, but a process it started outside its process group (setsid?) still "
                   "holds its output open; not waiting for it\n",
                   w.rank);
    }
    for (Stream* s : {&w.out, &w.err})
      if (s->fd >= 0) s->close_stream();
  }
}

// Removes the shared-memory segments that exited processes of job `job_id` ("": any job, then
// only those at least `min_age` old) left in /dev/shm: a rank killed between creating its outbox
// and its peers opening it cannot remove it itself.
void remove_leftover_segments(const std::string& job_id, std::chrono::seconds min_age) {
  const std::vector<std::string> removed = comm_detail::sweep_dead_outboxes(job_id, min_age);
  if (removed.empty()) return;
  std::fprintf(stderr, "colonyrun: removed %zu shared-memory segment%s that exited %s left in /dev/shm (%s%s)\n",
               removed.size(), removed.size() == 1 ? "" : "s", job_id.empty() ? "processes of earlier jobs" : "workers",
               removed.front().c_str(), removed.size() > 1 ? ", ..." : "");
}

void signal_all(std::vector<Worker>& workers, int sig) {
  for (auto& w : workers)
    if (!w.done && w.pid > 0) killpg(w.pid, sig);
}

// Whether an abort message ("rank 3 failed: ...", "rank 3 (pid 42) exited with code 1") is about `rank`.
bool names_rank(const std::string& message, int rank) {
  const std::string prefix = "rank " + std::to_string(rank);
  return message.compare(0, prefix.size(), prefix) == 0 &&
         (message.size() == prefix.size() || message[prefix.size()] == ' ' || message[prefix.size()] == ':');
}

// Which of the workers found failed in one polling round failed first. Their order within the
// round is lost (a worker that exits with an error, and one that crashes on the collective it
// broke a moment later, are reaped together), so the one the job's abort flag already names
// (rank 1 reported unreachable by a worker on another node) is the cause; else the lowest rank.
Worker* first_of(const std::vector<Worker*>& failed_now, TCPStore& store) {
  std::string flag;
  try {
    if (store.check({"colony/abort"})) {
      const Bytes b = store.get("colony/abort");
      flag.assign(b.begin(), b.end());
    }
  } catch (const std::exception&) {
  }
  for (Worker* w : failed_now)
    if (names_rank(flag, w->rank)) return w;
  return failed_now.front();
}

// Runs one generation of the local workers to the end. Returns the launcher's exit status (0 when
// every worker succeeded); `restartable` tells whether a worker failure (not a signal to the
// launcher) ended it.
int run_generation(const LaunchOptions& o, const Job& job, TCPStore& store, int restart, bool& restartable) {
  std::vector<Worker> workers(o.nproc_per_node);
  for (int i = 0; i < o.nproc_per_node; ++i) {
    workers[i].local_rank = i;
    workers[i].rank = job.rank_offset + i;
    spawn(workers[i], o, job, restart);
  }
  int first_failure = -1;
  std::string job_cause;  // the job's first failure when it was not this node's first
  bool stopping = false;
  bool interrupted = false;
  Clock::time_point kill_at{};
  restartable = false;
  while (true) {
    std::vector<pollfd> fds;
    for (auto& w : workers) {
      if (w.out.fd >= 0) fds.push_back({w.out.fd, POLLIN, 0});
      if (w.err.fd >= 0) fds.push_back({w.err.fd, POLLIN, 0});
    }
    if (!fds.empty()) poll(fds.data(), fds.size(), 50);
    else std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (auto& w : workers) {
      if (w.out.fd >= 0) w.out.pump();
      if (w.err.fd >= 0) w.err.pump();
    }
    bool all_done = true;
    std::vector<Worker*> failed_now;  // workers found failed in this round, in rank order
    for (auto& w : workers) {
      if (!w.done) {
        int status;
        if (waitpid(w.pid, &status, WNOHANG) == w.pid) {
          w.done = true;
          w.status = status;
          if (failed(status)) failed_now.push_back(&w);
        }
      }
      all_done = all_done && w.done;
    }
    if (!failed_now.empty() && first_failure < 0 && !stopping) {
      Worker& w = *first_of(failed_now, store);
      first_failure = static_cast<int>(&w - workers.data());
      const std::string why =
          "rank " + std::to_string(w.rank) + " (pid " + std::to_string(w.pid) + ") " + describe(w.status);
      // The job's abort flag holds its first failure. One that names another rank (on another
      // node, or one this worker was stopped for) is the cause to report.
      std::string first = why;
      try {
        const Bytes now = store.compare_set("colony/abort", {}, Bytes(why.begin(), why.end()));
        if (!now.empty()) first.assign(now.begin(), now.end());
      } catch (const std::exception&) {
      }
      if (!names_rank(first, w.rank)) job_cause = first;
      if (job_cause.empty()) {
        std::fprintf(stderr, "colonyrun: %s; stopping the other workers\n", why.c_str());
      } else {
        std::fprintf(stderr, "colonyrun: %s after the job began stopping (%s); stopping the other workers\n",
                     why.c_str(), job_cause.c_str());
      }
      stopping = true;
      kill_at = Clock::now() + o.grace;
      signal_all(workers, SIGTERM);
    }
    if (g_signal != 0 && !interrupted) {
      interrupted = true;
      std::fprintf(stderr, "colonyrun: got signal %d; stopping the workers\n", static_cast<int>(g_signal));
      if (!stopping) {
        stopping = true;
        kill_at = Clock::now() + o.grace;
      }
      signal_all(workers, SIGTERM);
    }
    if (stopping && Clock::now() >= kill_at) {
      signal_all(workers, SIGKILL);
      kill_at = Clock::now() + std::chrono::hours(1);
    }
    if (all_done) break;
  }
  drain(workers);
  for (auto& w : workers)
    if (w.log) std::fclose(w.log);
  remove_leftover_segments(job.id, std::chrono::seconds(0));
  // A signal that came while the last output was read still interrupted the job.
  if (g_signal != 0 && !interrupted) {
    interrupted = true;
    std::fprintf(stderr, "colonyrun: got signal %d while reading the workers' last output\n", static_cast<int>(g_signal));
  }
  if (first_failure >= 0) {
    const Worker& w = workers[first_failure];
    if (job_cause.empty()) {
      std::fprintf(stderr, "colonyrun: the job failed: rank %d (local rank %d) %s first\n", w.rank, w.local_rank,
                   describe(w.status).c_str());
    } else {
      std::fprintf(stderr, "colonyrun: the job failed: %s (on this node rank %d (local rank %d) then %s)\n",
                   job_cause.c_str(), w.rank, w.local_rank, describe(w.status).c_str());
    }
    restartable = !interrupted;
    return exit_code_of(w.status);
  }
  if (interrupted) return 128 + static_cast<int>(g_signal);
  return 0;
}

// Generation `restart` begins with the job's abort flag cleared. With several nodes, node 0
// clears it once every node has ended the previous generation (restart_everywhere) and then lets
// the others start, so no new worker sees the old generation's failure.
void start_generation(const LaunchOptions& o, TCPStore& store, int restart) {
  const std::string go = "colony/launcher/start/" + std::to_string(restart);
  if (o.node_rank == 0) {
    store.delete_key("colony/abort");
    if (o.nnodes > 1) store.set(go, std::string("1"));
  } else {
    store.wait({go}, std::chrono::minutes(5));
  }
}

// Waits until every node has posted its key. Workers that succeeded here may wait for as long as
// the others train; once the job is failing (`failed_here`, or the abort flag) every node's
// workers stop within seconds, so it waits at most `patience` from the call. False when it gave
// up, a signal came, or the store is gone.
bool wait_for_every_node(TCPStore& store, const std::vector<std::string>& keys, bool failed_here,
                         std::chrono::milliseconds patience) {
  const auto give_up = Clock::now() + patience;
  try {
    while (!store.check(keys)) {
      if (g_signal != 0) return false;
      if ((failed_here || store.check({"colony/abort"})) && Clock::now() >= give_up) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

// Whether the whole group starts again after generation `restart`, decided alike on every node:
// with several nodes each launcher posts how its workers ended and reads the others', so a node
// whose workers all succeeded still restarts when another node's failed (the group restarts as
// one), and none restarts after a signal to any launcher.
bool restart_everywhere(const LaunchOptions& o, TCPStore& store, int restart, int code, bool restartable) {
  if (o.nnodes == 1) return code != 0 && restartable && restart < o.max_restarts;
  if (o.max_restarts == 0) return false;
  const std::string prefix = "colony/launcher/ended/" + std::to_string(restart) + "/";
  // "<code> <restartable>": a failure here, a signal (not restartable), or success.
  store.set(prefix + std::to_string(o.node_rank), std::to_string(code) + " " + (restartable || code == 0 ? "1" : "0"));
  std::vector<std::string> keys;
  for (int k = 0; k < o.nnodes; ++k) keys.push_back(prefix + std::to_string(k));
  if (!wait_for_every_node(store, keys, code != 0, o.grace + std::chrono::seconds(60))) {
    if (g_signal == 0) std::fprintf(stderr, "colonyrun: not restarting: a node did not report how its workers ended\n");
    return false;
  }
  bool failed = false, can_restart = true;
  for (const std::string& k : keys) {
    const std::string v = store.get_string(k);
    failed |= v.rfind("0 ", 0) != 0;
    can_restart &= v.size() >= 2 && v.back() == '1';
  }
  return failed && can_restart && restart < o.max_restarts;
}

// Node launchers meet in the store: every node says how many workers it runs; ranks are
// numbered node by node.
Job rendezvous(const LaunchOptions& o, TCPStore& store, const std::string& token) {
  Job job;
  job.port = store.port();
  job.token = token;
  job.id = random_token().substr(0, 16);
  const std::string nn = std::to_string(o.nnodes);
  if (o.node_rank == 0) store.set("colony/launcher/nnodes", nn);
  const std::string theirs = store.get_string("colony/launcher/nnodes");
  if (theirs != nn) {
    throw std::invalid_argument("colonyrun: this node was started with --nnodes=" + nn + " but node 0 with --nnodes=" +
                                theirs + "; every node must use the same --nnodes");
  }
  store.set("colony/launcher/nproc/" + std::to_string(o.node_rank), std::to_string(o.nproc_per_node));
  for (int k = 0; k < o.nnodes; ++k) {
    const int n = std::stoi(store.get_string("colony/launcher/nproc/" + std::to_string(k)));
    if (k < o.node_rank) job.rank_offset += n;
    job.world_size += n;
  }
  return job;
}

}  // namespace

LaunchOptions resolve(LaunchOptions o) {
  if (o.nproc_per_node == 0) o.nproc_per_node = std::max(1, count_gpus());
  if (o.nproc_per_node < 0)
    throw std::invalid_argument("colonyrun: --nproc_per_node must be a positive number or auto, got " +
                                std::to_string(o.nproc_per_node));
  if (o.nnodes < 1) throw std::invalid_argument("colonyrun: --nnodes must be at least 1, got " + std::to_string(o.nnodes));
  if (o.node_rank < 0 || o.node_rank >= o.nnodes) {
    throw std::invalid_argument("colonyrun: --node_rank " + std::to_string(o.node_rank) +
                                " is not valid for --nnodes=" + std::to_string(o.nnodes) + " (expected 0.." +
                                std::to_string(o.nnodes - 1) + ")");
  }
  if (o.master_port < 0 || o.master_port > 65535)
    throw std::invalid_argument("colonyrun: --master_port must be in 0..65535, got " + std::to_string(o.master_port));
  if (o.master_port == 0 && o.nnodes > 1) {
    throw std::invalid_argument(
        "colonyrun: --master_port=0 works on one node only; with --nnodes > 1 every node needs the same explicit port");
  }
  if (o.max_restarts < 0) throw std::invalid_argument("colonyrun: --max_restarts must be >= 0");
  if (o.command.empty()) throw std::invalid_argument("colonyrun: no PROGRAM given (usage: colonyrun [flags] PROGRAM ARGS...)");
  if (find_program(o.command[0]).empty()) {
    throw std::invalid_argument("colonyrun: program \"" + o.command[0] +
                                "\" was not found or is not executable (looked in PATH unless it has a '/')");
  }
  if (!o.log_dir.empty()) {
    mkdir(o.log_dir.c_str(), 0755);
    struct stat st;
    if (stat(o.log_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw std::invalid_argument("colonyrun: --log_dir " + o.log_dir + " is not a directory that can be created");
  }
  return o;
}

int launch(const LaunchOptions& options) {
  const LaunchOptions o = resolve(options);
  std::string token;
  if (const char* t = std::getenv("COLONY_JOB_TOKEN"); t != nullptr && *t != '\0') {
    token = t;
  } else if (o.nnodes == 1) {
    token = random_token();
  } else {
    token = "colony-job:" + o.master_addr + ":" + std::to_string(o.master_port);
    std::fprintf(stderr,
                 "colonyrun: warning: COLONY_JOB_TOKEN is not set; using one derived from the master address. Set the "
                 "same COLONY_JOB_TOKEN on every node to make the store refuse processes of other jobs.\n");
  }
  // Leftovers of earlier jobs whose launcher did not get to sweep them (it was killed too).
  remove_leftover_segments("", std::chrono::seconds(60));
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  TCPStoreOptions so;
  so.host = o.master_addr;
  so.port = o.master_port;
  so.is_server = o.node_rank == 0;
  so.timeout = std::chrono::minutes(15);
  so.token = token;
  auto store = std::make_unique<TCPStore>(so);
  const Job job = rendezvous(o, *store, token);

  int code = 0;
  for (int restart = 0;; ++restart) {
    start_generation(o, *store, restart);
    bool restartable = false;
    code = run_generation(o, job, *store, restart, restartable);
    if (!restart_everywhere(o, *store, restart, code, restartable)) break;
    std::fprintf(stderr, "colonyrun: restarting the workers (%d of %d)\n", restart + 1, o.max_restarts);
  }
  // An interrupted job never reports success, whenever the signal came.
  if (code == 0 && g_signal != 0) code = 128 + static_cast<int>(g_signal);
  // The store lives in node 0's launcher: it stays up until every node's workers are done, so
  // that the others can still read the job's abort flag (its first failure) as they stop; a node
  // that never reports is not waited for long once the job is failing.
  store->set("colony/launcher/done/" + std::to_string(o.node_rank), std::to_string(code));
  if (o.node_rank == 0 && o.nnodes > 1) {
    std::vector<std::string> keys;
    for (int k = 0; k < o.nnodes; ++k) keys.push_back("colony/launcher/done/" + std::to_string(k));
    wait_for_every_node(*store, keys, code != 0, o.grace + std::chrono::seconds(15));
  }
  return code;
}

}  // namespace colony::dist
