#include "tests/multiprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <sstream>
#include <stdexcept>

namespace colony::testing {
namespace {

constexpr const char* kChildVar = "COLONY_TEST_RANK_CHILD";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

std::string current_test_filter() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) throw std::logic_error("run_ranks must be called from inside a TEST body");
  return std::string(info->test_suite_name()) + "." + info->name();
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) throw std::runtime_error("run_ranks: cannot read /proc/self/exe");
  buf[n] = '\0';
  return buf;
}

}  // namespace

bool in_rank_child() { return std::getenv(kChildVar) != nullptr; }

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("free_port: socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    throw std::runtime_error("free_port: bind() failed");
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

std::vector<RankResult> run_ranks(int world_size, const std::function<void(int rank)>& body,
                                  const RunRanksOptions& options) {
  if (in_rank_child()) {
    int rank = std::atoi(std::getenv("RANK"));
    int code = 0;
    try {
      body(rank);
      if (::testing::Test::HasFailure()) code = 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rank %d threw: %s\n", rank, e.what());
      code = 2;
    } catch (...) {
      std::fprintf(stderr, "rank %d threw a non-std exception\n", rank);
      code = 2;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    // _exit: a child must not run the rest of the test or static destructors that may wait on
    // threads of a failed job.
    _exit(code);
  }

  const std::string exe = self_exe();
  const std::string filter = "--gtest_filter=" + current_test_filter();
  const int port = options.master_port > 0 ? options.master_port : free_port();
  std::random_device rd;
  const std::string token = "test-token-" + std::to_string(rd()) + std::to_string(rd());

  struct Child {
    pid_t pid = -1;
    int out_fd = -1;
    RankResult result;
    bool done = false;
  };
  std::vector<Child> children(world_size);
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < world_size; ++r) {
    int pipefd[2];
    if (pipe(pipefd) != 0) throw std::runtime_error("run_ranks: pipe() failed");
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("run_ranks: fork() failed");
    if (pid == 0) {
      dup2(pipefd[1], 1);
      dup2(pipefd[1], 2);
      close(pipefd[0]);
      close(pipefd[1]);
      setenv(kChildVar, "1", 1);
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(world_size).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(world_size).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      setenv("COLONY_JOB_TOKEN", token.c_str(), 1);
      setenv("COLONY_NUM_THREADS", "1", 1);
      for (const auto& [k, v] : options.env) setenv(k.c_str(), replace_all(v, "{rank}", std::to_string(r)).c_str(), 1);
      execl(exe.c_str(), exe.c_str(), filter.c_str(), "--gtest_brief=1", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(pipefd[1]);
    fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
    children[r].pid = pid;
    children[r].out_fd = pipefd[0];
    children[r].result.rank = r;
  }

  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int remaining = world_size;
  bool killed = false;
  while (remaining > 0) {
    std::vector<pollfd> fds;
    for (auto& c : children)
      if (c.out_fd >= 0) fds.push_back({c.out_fd, POLLIN, 0});
    if (!fds.empty()) poll(fds.data(), fds.size(), 20);
    else usleep(20000);
    for (auto& c : children) {
      if (c.out_fd >= 0) {
        char buf[4096];
        ssize_t n;
        while ((n = read(c.out_fd, buf, sizeof(buf))) > 0) c.result.output.append(buf, n);
        if (n == 0) {
          close(c.out_fd);
          c.out_fd = -1;
        }
      }
      if (!c.done) {
        int status = 0;
        if (waitpid(c.pid, &status, WNOHANG) == c.pid) {
          c.done = true;
          --remaining;
          c.result.seconds = elapsed();
          if (WIFEXITED(status)) c.result.exit_code = WEXITSTATUS(status);
          if (WIFSIGNALED(status)) c.result.signal = WTERMSIG(status);
        }
      }
    }
    if (!killed && elapsed() * 1000 > options.timeout.count()) {
      killed = true;
      for (auto& c : children)
        if (!c.done) {
          c.result.timed_out = true;
          kill(c.pid, SIGKILL);
        }
    }
  }
  // Drain what is left in the pipes (grandchildren may hold them open: do not block).
  for (auto& c : children) {
    if (c.out_fd < 0) continue;
    char buf[4096];
    ssize_t n;
    while ((n = read(c.out_fd, buf, sizeof(buf))) > 0) c.result.output.append(buf, n);
    close(c.out_fd);
  }
  std::vector<RankResult> results;
  for (auto& c : children) results.push_back(c.result);
  return results;
}

::testing::AssertionResult all_succeeded(const std::vector<RankResult>& results) {
  std::ostringstream msg;
  bool ok = true;
  for (const auto& r : results) {
    if (r.exit_code == 0) continue;
    ok = false;
    msg << "\nrank " << r.rank << (r.timed_out ? " timed out and was killed" : "");
    if (r.signal) msg << " died of signal " << r.signal;
    else msg << " exited " << r.exit_code;
    msg << " after " << r.seconds << " s; its output:\n" << r.output;
  }
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << msg.str();
}

}  // namespace colony::testing
