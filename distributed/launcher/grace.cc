#include "distributed/launcher/grace.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace colony::dist {

std::chrono::milliseconds parse_grace(const std::string& text) {
  const std::string expected = "colonyrun: --grace must be a number of seconds from 0 to 86400 (one day), got \"" +
                               text + "\"";
  // strtod would also take leading blanks, hexadecimal and "inf"/"nan"; only a plain decimal number
  // is a duration a user means.
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos) {
    throw std::invalid_argument(expected);
  }
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(seconds) || seconds < 0 ||
      seconds > kMaxGraceSeconds) {
    throw std::invalid_argument(expected);
  }
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

}  // namespace colony::dist
