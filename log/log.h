// Minimal logging: log::info("epoch {} done", epoch). "{}" placeholders are replaced in order by
// the arguments' operator<< text. Lines go to stderr with a level tag; under the launcher, which
// sets RANK, the rank is included so interleaved output stays readable.
#pragma once

#include <sstream>
#include <string>
#include <utility>

namespace colony {

// `log` is a class rather than a namespace because colony::log(Tensor) is the logarithm: a name
// before "::" is looked up among classes and namespaces only, so log::info(...) and log(x) coexist
// (as `struct stat` and stat() do in POSIX).
struct log {
  enum class Level { Debug, Info, Warning, Error };

  // Messages below this level are dropped; COLONY_LOG_LEVEL=debug|info|warning|error sets it.
  static Level threshold();
  static void write(Level level, const std::string& message);

  template <typename... Args>
  static std::string format(const char* fmt, Args&&... args) {
    std::ostringstream os;
    format_into(os, fmt, std::forward<Args>(args)...);
    return os.str();
  }
  template <typename... Args>
  static void debug(const char* fmt, Args&&... args) {
    if (threshold() <= Level::Debug) write(Level::Debug, format(fmt, std::forward<Args>(args)...));
  }
  template <typename... Args>
  static void info(const char* fmt, Args&&... args) {
    if (threshold() <= Level::Info) write(Level::Info, format(fmt, std::forward<Args>(args)...));
  }
  template <typename... Args>
  static void warning(const char* fmt, Args&&... args) {
    if (threshold() <= Level::Warning) write(Level::Warning, format(fmt, std::forward<Args>(args)...));
  }
  template <typename... Args>
  static void error(const char* fmt, Args&&... args) {
    write(Level::Error, format(fmt, std::forward<Args>(args)...));
  }

 private:
  static void format_into(std::ostringstream& os, const char* fmt) { os << fmt; }
  template <typename T, typename... Rest>
  static void format_into(std::ostringstream& os, const char* fmt, T&& value, Rest&&... rest) {
    for (; *fmt; ++fmt) {
      if (fmt[0] == '{' && fmt[1] == '}') {
        os << value;
        format_into(os, fmt + 2, std::forward<Rest>(rest)...);
        return;
      }
      os << *fmt;
    }
  }
};

}  // namespace colony
