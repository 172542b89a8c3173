// What the fuzz targets share: a scratch folder for readers that take a path, and the rule for
// exceptions (a reader rejecting bad input with an error is correct; running out of memory on a
// small input is a finding).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

namespace colony::fuzz {

// A folder of this process's own, under TEST_TMPDIR (else the system's temp folder).
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TEST_TMPDIR");
    std::filesystem::path d = std::filesystem::path(tmp ? tmp : std::filesystem::temp_directory_path().string()) /
                              ("colony_fuzz." + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string write_scratch(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// Runs `fn`; errors are the expected answer to bad input, but std::bad_alloc means a small input
// made the reader allocate what its header claimed: abort so the fuzzer reports it.
template <typename F>
void expect_clean(F&& fn) {
  try {
    fn();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fuzz: std::bad_alloc: the input made the reader allocate more than it holds\n");
    std::abort();
  } catch (const std::exception&) {
  }
}

}  // namespace colony::fuzz
