#include "distributed/comm/shm_outbox.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>
#include <stdexcept>

#include "distributed/comm/shm_names.h"

namespace colony::dist::comm_detail {
namespace {

constexpr uint64_t kOutboxMagic = 0x436f6c6f6e795348ULL;  // "ColonySH"

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("shared-memory outbox: " + what + ": " + std::strerror(errno));
}

}  // namespace

std::unique_ptr<SharedOutbox> SharedOutbox::create(size_t capacity, uint64_t secret) {
  std::random_device entropy;
  const uint64_t random = (static_cast<uint64_t>(entropy()) << 32) | entropy();
  // Named after its job and process, so that a sweep can remove it if this process dies before
  // unlink() (shm_names.h).
  const std::string named = outbox_name(outbox_job_id(), static_cast<long>(::getpid()), random);
  const char* name = named.c_str();
  const size_t bytes = kSlotsOffset + 2 * capacity;
  const int fd = ::shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) fail(std::string("shm_open ") + name);
  // Reserve every page now: on a tmpfs too small for it this fails cleanly, where touching a
  // page of a sparse file later would kill the process with SIGBUS.
  const int reserved = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  void* base = reserved == 0 ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  const int saved = reserved != 0 ? reserved : errno;
  ::close(fd);
  if (base == MAP_FAILED) {
    ::shm_unlink(name);
    errno = saved;
    fail(reserved != 0 ? "reserving " + std::to_string(bytes) + " bytes in /dev/shm" : "mmap");
  }
  auto* control = new (base) Control{};
  control->magic = kOutboxMagic;
  control->secret = secret;
  control->capacity = capacity;
  return std::unique_ptr<SharedOutbox>(
      new SharedOutbox(name, static_cast<uint8_t*>(base), bytes, capacity, /*owner=*/true));
}

std::unique_ptr<SharedOutbox> SharedOutbox::open(const std::string& name, size_t capacity, uint64_t secret) {
  if (name.empty() || name[0] != '/') return nullptr;
  const int fd = ::shm_open(name.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  const size_t bytes = kSlotsOffset + 2 * capacity;
  struct stat st {};
  void* base = ::fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == bytes
                   ? ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0)
                   : MAP_FAILED;
  ::close(fd);
  if (base == MAP_FAILED) return nullptr;
  const auto* control = static_cast<const Control*>(base);
  if (control->magic != kOutboxMagic || control->secret != secret || control->capacity != capacity) {
    ::munmap(base, bytes);
    return nullptr;
  }
  return std::unique_ptr<SharedOutbox>(
      new SharedOutbox(name, static_cast<uint8_t*>(base), bytes, capacity, /*owner=*/false));
}

SharedOutbox::~SharedOutbox() {
  unlink();
  ::munmap(base_, mapped_);
}

void SharedOutbox::unlink() {
  if (owner_ && linked_) ::shm_unlink(name_.c_str());
  linked_ = false;
}

void SharedOutbox::publish(uint64_t message, uint64_t length) {
  Control& c = mutable_control();
  c.length[message % 2] = length;
  // Releases the slot's bytes and the length with it; sequentially consistent against the
  // peers' set_sleeping() (see there).
  c.published.store(message, std::memory_order_seq_cst);
}

}  // namespace colony::dist::comm_detail
