#include "distributed/launcher/grace.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace colony::dist {
namespace {

using std::chrono::milliseconds;

std::string error_of(const std::string& text) {
  try {
    parse_grace(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Grace, SecondsToMilliseconds) {
  EXPECT_EQ(parse_grace("5"), milliseconds(5000));
  EXPECT_EQ(parse_grace("0"), milliseconds(0));
  EXPECT_EQ(parse_grace("0.25"), milliseconds(250));
  EXPECT_EQ(parse_grace("1e2"), milliseconds(100'000));
  EXPECT_EQ(parse_grace("0.0004"), milliseconds(0));
  EXPECT_EQ(parse_grace("86400"), milliseconds(86'400'000));
}

// inf and 1e300 went through an undefined double -> int64 conversion (the workers were SIGKILLed at
// once); nan and -1 were accepted.
TEST(Grace, RefusesWhatIsNotADuration) {
  for (const std::string bad : {"inf", "-inf", "infinity", "nan", "NaN", "-1", "-0.5", "1e300", "1e999", "86400.5",
                                "", " 5", "5s", "0x10", "five", "1e", "--"}) {
    EXPECT_EQ(error_of(bad), "colonyrun: --grace must be a number of seconds from 0 to 86400 (one day), got \"" + bad + "\"")
        << bad;
  }
}

}  // namespace
}  // namespace colony::dist
