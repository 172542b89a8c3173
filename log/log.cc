#include "log/log.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

namespace colony {

log::Level log::threshold() {
  static const Level level = [] {
    const char* env = std::getenv("COLONY_LOG_LEVEL");
    if (env == nullptr) return Level::Info;
    if (std::strcmp(env, "debug") == 0) return Level::Debug;
    if (std::strcmp(env, "warning") == 0) return Level::Warning;
    if (std::strcmp(env, "error") == 0) return Level::Error;
    return Level::Info;
  }();
  return level;
}

void log::write(Level level, const std::string& message) {
  static std::mutex mu;
  static const char* tags[] = {"D", "I", "W", "E"};
  const char* rank = std::getenv("RANK");
  std::lock_guard<std::mutex> lk(mu);
  std::cerr << "[" << tags[static_cast<int>(level)];
  if (rank) std::cerr << " rank " << rank;
  std::cerr << "] " << message << std::endl;
}

}  // namespace colony
