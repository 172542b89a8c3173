#include "distributed/comm/shm_names.h"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace colony::dist::comm_detail {
namespace {

const char kPrefix[] = "colony-";

bool alive(long pid) {
  // EPERM: it exists, under another user.
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

bool all_of_class(const std::string& s, int (*is_class)(int)) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_class(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

std::string outbox_job_id() {
  const char* v = std::getenv("COLONY_JOB_ID");
  std::string job;
  for (const char* c = v; c != nullptr && *c != '\0' && job.size() < 32; ++c)
    if (std::isalnum(static_cast<unsigned char>(*c))) job += *c;
  return job.empty() ? "0" : job;
}

std::string outbox_name(const std::string& job, long pid, uint64_t random) {
  char tail[48];
  std::snprintf(tail, sizeof tail, "-%ld-%016llx", pid, static_cast<unsigned long long>(random));
  return "/" + std::string(kPrefix) + job + tail;
}

std::optional<OutboxOwner> parse_outbox_name(const std::string& name) {
  std::string s = !name.empty() && name[0] == '/' ? name.substr(1) : name;
  if (s.compare(0, sizeof kPrefix - 1, kPrefix) != 0) return std::nullopt;
  s = s.substr(sizeof kPrefix - 1);
  // <job>-<pid>-<random>: the job has no '-', so the fields are split at the first two.
  const size_t a = s.find('-');
  const size_t b = a == std::string::npos ? a : s.find('-', a + 1);
  if (b == std::string::npos) return std::nullopt;
  const std::string job = s.substr(0, a), pid = s.substr(a + 1, b - a - 1), random = s.substr(b + 1);
  if (!all_of_class(job, std::isalnum) || !all_of_class(pid, std::isdigit) || pid.size() > 9 ||
      random.size() != 16 || !all_of_class(random, std::isxdigit))
    return std::nullopt;
  return OutboxOwner{job, std::strtol(pid.c_str(), nullptr, 10)};
}

std::vector<std::string> sweep_dead_outboxes(const std::string& job, std::chrono::seconds min_age) {
  std::vector<std::string> removed;
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr) return removed;
  const std::time_t now = std::time(nullptr);
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    const std::optional<OutboxOwner> owner = parse_outbox_name(name);
    if (!owner || (!job.empty() && owner->job != job) || owner->pid <= 0 || alive(owner->pid)) continue;
    struct stat st {};
    if (::stat(("/dev/shm/" + name).c_str(), &st) != 0 || now - st.st_mtime < min_age.count()) continue;
    if (::shm_unlink(("/" + name).c_str()) == 0) removed.push_back("/" + name);
  }
  ::closedir(dir);
  return removed;
}

}  // namespace colony::dist::comm_detail
