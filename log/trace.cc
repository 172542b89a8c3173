#include "log/trace.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

namespace colony::trace {
namespace {

struct Event {
  std::string name;
  const char* category;
  Clock::time_point begin, end;
  Lane lane;
};

struct Recorder {
  std::mutex mu;
  std::string path;
  std::vector<Event> events;
  Clock::time_point origin = Clock::now();
};

Recorder& recorder() {
  static Recorder* r = new Recorder;  // never destroyed: spans may be recorded during exit
  return *r;
}

std::atomic<int> state{-1};  // -1 unknown, 0 off, 1 on

std::string resolve_path(std::string path) {
  const char* rank = std::getenv("RANK");
  const std::string r = rank != nullptr ? rank : "0";
  size_t p = path.find("{rank}");
  if (p != std::string::npos) return path.replace(p, 6, r);
  if (rank == nullptr) return path;
  size_t dot = path.rfind('.');
  size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + ".rank" + r;
  return path.substr(0, dot) + ".rank" + r + path.substr(dot);
}

void flush_at_exit() { flush(); }

void turn_on(const std::string& path) {
  Recorder& rec = recorder();
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    rec.path = resolve_path(path);
  }
  if (state.exchange(1) != 1) std::atexit(flush_at_exit);
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

}  // namespace

bool enabled() {
  int s = state.load(std::memory_order_relaxed);
  if (s >= 0) return s == 1;
  const char* env = std::getenv("COLONY_TRACE");
  if (env != nullptr && *env != '\0') {
    turn_on(env);
    return true;
  }
  int expected = -1;
  state.compare_exchange_strong(expected, 0);
  return state.load() == 1;
}

void start(const std::string& path) { turn_on(path); }

void complete(const std::string& name, const char* category, Clock::time_point begin, Clock::time_point end,
              Lane lane) {
  if (!enabled()) return;
  Recorder& rec = recorder();
  std::lock_guard<std::mutex> lock(rec.mu);
  rec.events.push_back({name, category, begin, end, lane});
}

std::string flush() {
  if (!enabled()) return "";
  Recorder& rec = recorder();
  std::lock_guard<std::mutex> lock(rec.mu);
  const char* rank_env = std::getenv("RANK");
  const int pid = rank_env != nullptr ? std::atoi(rank_env) : 0;
  std::ostringstream os;
  os << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  os << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << pid << ",\"args\":{\"name\":\"rank " << pid << "\"}},\n";
  const char* lanes[] = {"compute", "communication", "GPU compute stream", "GPU communication stream"};
  for (int lane = 0; lane < 4; ++lane)
    os << (lane ? ",\n" : "") << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << lane
       << ",\"args\":{\"name\":\"" << lanes[lane] << "\"}}";
  // Where ts 0 lies on the machine's monotonic clock, so traces of ranks on one machine can be
  // lined up (rank skew) by shifting each by its origin.
  os << ",\n{\"name\":\"clock_origin\",\"ph\":\"M\",\"pid\":" << pid << ",\"args\":{\"steady_clock_us\":"
     << std::chrono::duration_cast<std::chrono::microseconds>(rec.origin.time_since_epoch()).count() << "}}";
  auto us = [&](Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - rec.origin).count();
  };
  for (const Event& e : rec.events) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%d", us(e.begin),
                  us(e.end) - us(e.begin), pid, static_cast<int>(e.lane));
    os << ",\n{\"name\":\"" << json_escape(e.name) << "\",\"cat\":\"" << e.category << "\",\"ph\":\"X\"," << buf << "}";
  }
  os << "\n]}\n";
  const std::string tmp = rec.path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) {
      std::fprintf(stderr, "[colony] cannot write the trace to %s\n", tmp.c_str());
      return "";
    }
    f << os.str();
  }
  if (std::rename(tmp.c_str(), rec.path.c_str()) != 0) {
    std::fprintf(stderr, "[colony] cannot rename the trace to %s\n", rec.path.c_str());
    return "";
  }
  return rec.path;
}

}  // namespace colony::trace
