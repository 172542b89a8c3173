#include "data/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace colony::data {
namespace fs = std::filesystem;

namespace {

struct ReaderCloser {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
struct WriterCloser {
  void operator()(struct archive* a) const { archive_write_free(a); }
};

std::string archive_message(struct archive* a) {
  const char* m = archive_error_string(a);
  return m ? m : "unknown libarchive error";
}

// The entry's path below `dest` after dropping `strip` leading components; empty when nothing is
// left. Throws on absolute paths and "..", before libarchive's own (terser) guard would.
std::string destination_of(const std::string& archive, const std::string& name, int strip) {
  fs::path p(name);
  if (p.is_absolute()) {
    throw std::runtime_error("extract_tar_gz: " + archive + ": entry '" + name + "' has an absolute path");
  }
  fs::path kept;
  int component = 0;
  for (const fs::path& part : p) {
    if (part == "..") {
      throw std::runtime_error("extract_tar_gz: " + archive + ": entry '" + name +
                               "' contains '..' and would escape the destination");
    }
    if (part.empty() || part == ".") continue;
    if (component++ < strip) continue;
    kept /= part;
  }
  return kept.string();
}

}  // namespace

void extract_tar_gz(const std::string& archive, const std::string& dest, int strip_components) {
  if (strip_components < 0) {
    throw std::invalid_argument("extract_tar_gz: strip_components must be >= 0, got " +
                                std::to_string(strip_components));
  }
  if (!fs::is_regular_file(archive)) {
    throw std::runtime_error("extract_tar_gz: " + archive + " does not exist or is not a file");
  }
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) throw std::runtime_error("extract_tar_gz: cannot create " + dest + ": " + ec.message());
  // Entries are written below the resolved destination, which has no ".." or symlinks of its own
  // for libarchive's guards to trip over.
  const fs::path root = fs::weakly_canonical(fs::absolute(dest));

  std::unique_ptr<struct archive, ReaderCloser> in(archive_read_new());
  archive_read_support_filter_gzip(in.get());
  archive_read_support_format_tar(in.get());
  if (archive_read_open_filename(in.get(), archive.c_str(), 1 << 16) != ARCHIVE_OK) {
    throw std::runtime_error("extract_tar_gz: cannot open " + archive + ": " + archive_message(in.get()));
  }
  std::unique_ptr<struct archive, WriterCloser> out(archive_write_disk_new());
  // Absolute entry paths are refused by destination_of; the paths handed to libarchive are absolute.
  archive_write_disk_set_options(
      out.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS);
  archive_write_disk_set_standard_lookup(out.get());

  struct archive_entry* entry = nullptr;
  while (true) {
    int r = archive_read_next_header(in.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) {
      throw std::runtime_error("extract_tar_gz: " + archive +
                               " is corrupt or not a .tar.gz: " + archive_message(in.get()));
    }
    const std::string name = archive_entry_pathname(entry);
    const std::string rel = destination_of(archive, name, strip_components);
    if (rel.empty()) continue;
    archive_entry_set_pathname(entry, (root / rel).c_str());
    if (const char* link = archive_entry_hardlink(entry)) {
      const std::string link_rel = destination_of(archive, link, strip_components);
      if (link_rel.empty()) continue;
      archive_entry_set_hardlink(entry, (root / link_rel).c_str());
    }
    if (archive_write_header(out.get(), entry) < ARCHIVE_WARN) {
      throw std::runtime_error("extract_tar_gz: " + archive + ": cannot write entry '" + name +
                               "': " + archive_message(out.get()));
    }
    if (archive_entry_size(entry) > 0) {
      const void* block = nullptr;
      size_t size = 0;
      la_int64_t offset = 0;
      while ((r = archive_read_data_block(in.get(), &block, &size, &offset)) == ARCHIVE_OK) {
        if (archive_write_data_block(out.get(), block, size, offset) < ARCHIVE_WARN) {
          throw std::runtime_error("extract_tar_gz: " + archive + ": writing entry '" + name +
                                   "' failed: " + archive_message(out.get()));
        }
      }
      if (r != ARCHIVE_EOF) {
        throw std::runtime_error("extract_tar_gz: " + archive + " is truncated or corrupt in entry '" + name +
                                 "': " + archive_message(in.get()));
      }
    }
    if (archive_write_finish_entry(out.get()) < ARCHIVE_WARN) {
      throw std::runtime_error("extract_tar_gz: " + archive + ": finishing entry '" + name +
                               "' failed: " + archive_message(out.get()));
    }
  }
}

namespace {

size_t write_to_file(char* data, size_t size, size_t count, void* file) {
  return std::fwrite(data, size, count, static_cast<FILE*>(file)) * size;
}

struct CurlCloser {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};

}  // namespace

void download_file(const std::string& url, const std::string& path) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });

  const fs::path target(path);
  if (target.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw std::runtime_error("download: cannot create " + target.parent_path().string() + ": " + ec.message());
  }
  const std::string part = path + ".part";
  FILE* file = std::fopen(part.c_str(), "wb");
  if (!file) throw std::runtime_error("download: cannot write " + part);

  std::unique_ptr<CURL, CurlCloser> curl(curl_easy_init());
  char error[CURL_ERROR_SIZE] = {0};
  CURLcode rc = CURLE_FAILED_INIT;
  if (curl) {
    curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, write_to_file);
    curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, file);
    curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl.get(), CURLOPT_FAILONERROR, 1L);  // HTTP >= 400 is an error, not a file
    curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, 30L);
    // A stalled transfer (under 1 KB/s for a minute) fails instead of hanging forever.
    curl_easy_setopt(curl.get(), CURLOPT_LOW_SPEED_LIMIT, 1024L);
    curl_easy_setopt(curl.get(), CURLOPT_LOW_SPEED_TIME, 60L);
    rc = curl_easy_perform(curl.get());
  }
  const bool closed = std::fclose(file) == 0;
  if (rc != CURLE_OK || !closed) {
    std::remove(part.c_str());
    std::string why = rc != CURLE_OK ? (error[0] ? error : curl_easy_strerror(rc)) : "closing " + part + " failed";
    throw std::runtime_error("download: fetching " + url + " failed: " + why);
  }
  std::error_code ec;
  fs::rename(part, target, ec);
  if (ec) {
    std::remove(part.c_str());
    throw std::runtime_error("download: cannot move " + part + " to " + path + ": " + ec.message());
  }
}

}  // namespace colony::data
