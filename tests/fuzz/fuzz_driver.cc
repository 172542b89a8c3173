// A bounded mutation loop around a libFuzzer entry point (LLVMFuzzerTestOneInput), so that every
// fuzz target is also a cc_test that `bazel test` runs: first each seed of the corpus folders given
// as arguments, then mutants of them for COLONY_FUZZ_SECONDS seconds (default 30 in a sanitizer
// build, 3 otherwise) or COLONY_FUZZ_RUNS inputs, whichever ends first. Deterministic for a given
// COLONY_FUZZ_SEED (default 1). Blind: there is no coverage feedback, which is what libFuzzer adds
// (tests/fuzz/README.md). A crash or sanitizer report ends the test; the input that caused it is
// written to $TEST_UNDECLARED_OUTPUTS_DIR (else the working directory) as crash-<run>.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define COLONY_FUZZ_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COLONY_FUZZ_SANITIZED 1
#endif
#endif
#ifdef COLONY_FUZZ_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif
#include <csignal>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Bytes = std::vector<uint8_t>;
namespace fs = std::filesystem;

// The input being run, for the crash report.
const Bytes* g_current = nullptr;
long g_run = 0;

void save_current_input() {
  if (g_current == nullptr) return;
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const std::string path = std::string(dir ? dir : ".") + "/crash-" + std::to_string(g_run);
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(g_current->data(), 1, g_current->size(), f);
    std::fclose(f);
    std::fprintf(stderr, "fuzz: the input of run %ld is in %s (%zu bytes)\n", g_run, path.c_str(), g_current->size());
  }
}

void on_fatal_signal(int sig) {
  save_current_input();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

double env_number(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

// Tokens worth splicing in: the formats' syntax and the numbers at the edges of every integer type
// (the sizes, counts and offsets that the readers multiply and add).
const std::vector<std::string>& dictionary() {
  static const std::vector<std::string> words = {
      "{", "}", "[", "]", "\"", ":", ",", "\\", "-1", "0", "1e400", "-0", "NaN", "1.5",
      "4294967296", "9223372036854775807", "9223372036854775808", "18446744073709551615",
      "18446744073709551616", "4611686018427387904", "\"dtype\"", "\"shape\"", "\"data_offsets\"",
      "\"__metadata__\"", "\"F32\"", "\"BOOL\"", "\"U8\"", "\"epoch\"", "\"step\"", "\"lr\""};
  return words;
}

const uint64_t kInteresting[] = {0,          1,          0x7f,       0x80,       0xff,       0x7fff,
                                 0xffff,     0x7fffffff, 0x80000000, 0xffffffff, 1ull << 32, 1ull << 40,
                                 1ull << 62, 1ull << 63, ~0ull,      30730000,   3073};

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  Bytes mutate(Bytes in, const std::vector<Bytes>& corpus, size_t max_size) {
    const int rounds = 1 + static_cast<int>(below(8));
    for (int i = 0; i < rounds; ++i) one(in, corpus);
    if (in.size() > max_size) in.resize(max_size);
    return in;
  }

 private:
  uint64_t below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }

  void one(Bytes& b, const std::vector<Bytes>& corpus) {
    switch (below(9)) {
      case 0:  // flip a bit
        if (!b.empty()) b[below(b.size())] ^= static_cast<uint8_t>(1u << below(8));
        break;
      case 1:  // a random byte
        if (!b.empty()) b[below(b.size())] = static_cast<uint8_t>(rng_());
        break;
      case 2: {  // an interesting integer, 1/2/4/8 bytes, either byte order, over or into the input
        const uint64_t v = kInteresting[below(std::size(kInteresting))];
        const size_t width = size_t{1} << below(4);
        const bool big = below(2);
        Bytes w(width);
        for (size_t k = 0; k < width; ++k) w[big ? width - 1 - k : k] = static_cast<uint8_t>(v >> (8 * k));
        const size_t at = below(b.size() + 1);
        if (below(2) && at + width <= b.size()) {
          std::copy(w.begin(), w.end(), b.begin() + static_cast<std::ptrdiff_t>(at));
        } else {
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), w.begin(), w.end());
        }
        break;
      }
      case 3: {  // erase a range
        if (b.empty()) break;
        const size_t at = below(b.size()), n = 1 + below(std::min<size_t>(b.size() - at, 64));
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
        break;
      }
      case 4: {  // duplicate a range
        if (b.empty()) break;
        const size_t at = below(b.size()), n = 1 + below(std::min<size_t>(b.size() - at, 256));
        Bytes piece(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(below(b.size() + 1)), piece.begin(), piece.end());
        break;
      }
      case 5:
      case 6: {  // a dictionary word, inserted or written over
        const std::string& w = dictionary()[below(dictionary().size())];
        const size_t at = below(b.size() + 1);
        if (below(2) && at + w.size() <= b.size()) {
          std::copy(w.begin(), w.end(), b.begin() + static_cast<std::ptrdiff_t>(at));
        } else {
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), w.begin(), w.end());
        }
        break;
      }
      case 7: {  // splice: our head, another seed's tail
        const Bytes& other = corpus[below(corpus.size())];
        const size_t cut = below(b.size() + 1), from = below(other.size() + 1);
        b.resize(cut);
        b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
      case 8:  // truncate
        b.resize(below(b.size() + 1));
        break;
    }
  }

  std::mt19937_64 rng_;
};

void run_one(const Bytes& input) {
  g_current = &input;
  LLVMFuzzerTestOneInput(input.data(), input.size());
  g_current = nullptr;
  ++g_run;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Bytes> corpus;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    std::vector<fs::path> files;
    if (fs::is_directory(argv[i], ec)) {
      for (const auto& e : fs::recursive_directory_iterator(argv[i], ec))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(argv[i], ec)) {
      files.emplace_back(argv[i]);  // one input: run it alone (reproducing a crash)
    } else {
      std::fprintf(stderr, "fuzz: %s is neither a corpus folder nor an input file\n", argv[i]);
      return 2;
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "fuzz: no seeds (pass corpus folders or input files)\n");
    return 2;
  }
#ifdef COLONY_FUZZ_SANITIZED
  __sanitizer_set_death_callback(save_current_input);
  const double default_seconds = 30;
#else
  const double default_seconds = 3;
#endif
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, on_fatal_signal);

  const double seconds = env_number("COLONY_FUZZ_SECONDS", default_seconds);
  const auto max_runs = static_cast<long>(env_number("COLONY_FUZZ_RUNS", 1e9));
  size_t max_size = 0;
  for (const auto& c : corpus) max_size = std::max(max_size, c.size());
  max_size = std::max<size_t>(2 * max_size, 4096);

  const auto start = std::chrono::steady_clock::now();
  for (const auto& seed : corpus) run_one(seed);
  Mutator mutator(static_cast<uint64_t>(env_number("COLONY_FUZZ_SEED", 1)));
  const bool single_input = argc == 2 && fs::is_regular_file(argv[1]);
  while (!single_input && g_run < max_runs &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    run_one(mutator.mutate(corpus[g_run % corpus.size()], corpus, max_size));
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz: %ld inputs (%zu seeds) in %.1f s, %.0f inputs/s, no crash\n", g_run, corpus.size(), took,
              took > 0 ? static_cast<double>(g_run) / took : 0.0);
  return 0;
}
