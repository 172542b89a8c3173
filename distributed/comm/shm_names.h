// The names of the shared-memory outboxes (shm_outbox.h) in /dev/shm, and the sweep that removes
// those a dead process left behind.
//
// An outbox's name exists from its creation until every peer has opened it (1-11 ms measured
// during set-up on the 2-core VM); a rank killed (SIGKILL) in that window leaves its 4 MiB there,
// since nothing of the process runs any more. The name says whose it was,
//   /colony-<job>-<pid>-<16 hex digits>
// (job: COLONY_JOB_ID, which colonyrun sets for its workers, else "0"), so that colonyrun removes
// its job's leftovers once the workers have exited and, at start, old leftovers of any job.
// Kept apart from the outbox itself so that the launcher links it without the tensor library.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace colony::dist::comm_detail {

// This process's job in outbox names: COLONY_JOB_ID's letters and digits (at most 32), or "0".
std::string outbox_job_id();

// "/colony-<job>-<pid>-<random as 16 hex digits>".
std::string outbox_name(const std::string& job, long pid, uint64_t random);

struct OutboxOwner {
  std::string job;
  long pid = 0;
};
// Whose outbox `name` is ("/colony-..." or the "colony-..." of a /dev/shm listing); nullopt when
// it is not an outbox name.
std::optional<OutboxOwner> parse_outbox_name(const std::string& name);

// Removes the outboxes in /dev/shm whose creating process no longer exists, of job `job` ("":
// every job) and at least `min_age` old (by modification time: a process in another PID
// namespace sharing /dev/shm looks dead from here, but holds its names for milliseconds only).
// Returns the names removed. Names of live processes, and names this user may not remove, stay.
std::vector<std::string> sweep_dead_outboxes(const std::string& job, std::chrono::seconds min_age);

}  // namespace colony::dist::comm_detail
