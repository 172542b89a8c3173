#include "distributed/store/accept_backoff.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace colony::dist {

bool AcceptBackoff::failed(int err) {
  if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM) return false;
  if (backoff_ == kFirst) {
    std::fprintf(stderr, "colony: %s cannot accept connections (%s); pausing accept() and retrying\n", who_.c_str(),
                 std::strerror(err));
    std::fflush(stderr);
  }
  paused_until_ = Clock::now() + backoff_;
  backoff_ = std::min(backoff_ * 2, kLongest);
  return true;
}

}  // namespace colony::dist
