// colonyrun's --grace (seconds between SIGTERM and SIGKILL when stopping workers), parsed and
// checked: CLI11 read it as a double, and `inf` or `1e300` then went through an undefined
// double -> int64 conversion (the workers were SIGKILLed at once) while `nan` and `-1` were taken.
#pragma once

#include <chrono>
#include <string>

namespace colony::dist {

// The longest grace accepted: one day. Workers that need longer to stop are hung; the bound also
// keeps `now + grace` far from the clock's range (steady_clock counts int64 nanoseconds, ~292 years).
constexpr double kMaxGraceSeconds = 86400;

// "5", "0.5", "1e2": seconds, 0 to kMaxGraceSeconds, rounded to the millisecond. Throws
// std::invalid_argument with a message for the user otherwise (inf, nan, negative, not a number).
std::chrono::milliseconds parse_grace(const std::string& text);

}  // namespace colony::dist
