#include "data/cifar10.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "data/archive.h"
#include "ops/raw_ops.h"

namespace colony::data {
namespace fs = std::filesystem;

namespace {

constexpr int64_t kFileBytes = CIFAR10::kRecordsPerFile * CIFAR10::kRecordBytes;

std::string how_to_get(const std::string& root) {
  return "Get the dataset with data::CIFAR10::download(\"" + root + "\"), or by hand: download " + CIFAR10::kUrl +
         " and unpack it (tar xzf cifar-10-binary.tar.gz makes cifar-10-batches-bin/, the directory to pass)";
}

std::string all_files() {
  std::string s;
  for (Split split : {Split::kTrain, Split::kTest}) {
    for (const auto& f : CIFAR10::file_names(split)) s += (s.empty() ? "" : ", ") + f;
  }
  return s;
}

// What a path that is not a regular file is, for the error.
const char* kind_of(const fs::file_status& status) {
  switch (status.type()) {
    case fs::file_type::directory: return "directory";
    case fs::file_type::fifo: return "FIFO";
    case fs::file_type::socket: return "socket";
    case fs::file_type::block: return "block device";
    case fs::file_type::character: return "character device";
    default: return "special file";
  }
}

// Reads one batch file into `images` / `labels` starting at record `first`.
void read_batch_file(const std::string& path, uint8_t* images, int64_t* labels) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("CIFAR10: cannot open " + path);
  std::vector<char> bytes(static_cast<size_t>(kFileBytes));
  in.read(bytes.data(), kFileBytes);
  if (in.gcount() != kFileBytes || in.peek() != std::char_traits<char>::eof()) {
    throw std::runtime_error("CIFAR10: " + path + " changed while being read (expected " + std::to_string(kFileBytes) +
                             " bytes)");
  }
  for (int64_t r = 0; r < CIFAR10::kRecordsPerFile; ++r) {
    const char* record = bytes.data() + r * CIFAR10::kRecordBytes;
    const auto label = static_cast<uint8_t>(record[0]);
    if (label > 9) {
      throw std::runtime_error("CIFAR10: " + path + ": record " + std::to_string(r) + " has label " +
                               std::to_string(label) +
                               ", expected 0..9 (the file is corrupt, or not CIFAR-10's binary format)");
    }
    labels[r] = label;
    std::memcpy(images + r * CIFAR10::kImageBytes, record + 1, CIFAR10::kImageBytes);
  }
}

}  // namespace

const std::vector<std::string>& CIFAR10::classes() {
  static const std::vector<std::string> names = {"airplane", "automobile", "bird",  "cat",  "deer",
                                                 "dog",      "frog",       "horse", "ship", "truck"};
  return names;
}

std::vector<std::string> CIFAR10::file_names(Split split) {
  if (split == Split::kTest) return {"test_batch.bin"};
  return {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"};
}

CIFAR10::CIFAR10(const std::string& root, Split split) : root_(root), split_(split) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    throw std::runtime_error("CIFAR10: no directory " + fs::absolute(root, ec).string() + " (looked there for " +
                             all_files() + "). " + how_to_get(root));
  }
  const auto names = file_names(split);
  // Check every file before reading any, so the error lists the problem without a long read first.
  for (const auto& name : names) {
    const fs::path path = fs::path(root) / name;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status)) {
      throw std::runtime_error("CIFAR10: " + path.string() + " is missing. " + how_to_get(root));
    }
    if (!fs::is_regular_file(status)) {
      // A FIFO or a device would block or never end when read; a directory cannot be read at all.
      throw std::runtime_error("CIFAR10: " + path.string() + " is not a regular file (it is a " + kind_of(status) +
                               "); expected a CIFAR-10 binary batch. " + how_to_get(root));
    }
    const auto bytes = static_cast<int64_t>(fs::file_size(path, ec));
    if (ec || bytes != kFileBytes) {
      throw std::runtime_error("CIFAR10: " + path.string() + " holds " + std::to_string(bytes) + " bytes, expected " +
                               std::to_string(kFileBytes) + " (" + std::to_string(kRecordsPerFile) +
                               " records of 1 label byte + 3072 pixel bytes): the file is truncated or not a "
                               "CIFAR-10 binary batch. " +
                               how_to_get(root));
    }
  }
  const auto n = static_cast<int64_t>(names.size()) * kRecordsPerFile;
  Tensor images = raw::empty({n, 3, 32, 32}, kUInt8);
  Tensor targets = raw::empty({n}, kInt64);
  for (size_t f = 0; f < names.size(); ++f) {
    const int64_t first = static_cast<int64_t>(f) * kRecordsPerFile;
    read_batch_file((fs::path(root) / names[f]).string(), images.data_ptr<uint8_t>() + first * kImageBytes,
                    targets.data_ptr<int64_t>() + first);
  }
  static_cast<InMemoryImageDataset&>(*this) = InMemoryImageDataset(images, targets);
}

bool CIFAR10::available(const std::string& root) {
  std::error_code ec;
  for (Split split : {Split::kTrain, Split::kTest}) {
    for (const auto& name : file_names(split)) {
      const fs::path path = fs::path(root) / name;
      if (!fs::is_regular_file(path, ec) || static_cast<int64_t>(fs::file_size(path, ec)) != kFileBytes) return false;
    }
  }
  return true;
}

void CIFAR10::download(const std::string& root, const std::string& url) {
  if (available(root)) return;
  const std::string archive = (fs::path(root) / "cifar-10-binary.tar.gz").string();
  std::cerr << "CIFAR10::download: fetching " << url << " into " << root << "\n";
  download_file(url, archive);
  extract_tar_gz(archive, root, /*strip_components=*/1);
  std::error_code ec;
  fs::remove(archive, ec);
  if (!available(root)) {
    throw std::runtime_error("CIFAR10::download: after unpacking " + url + ", " + root + " still lacks " + all_files() +
                             " of the right sizes (not the CIFAR-10 binary archive?)");
  }
}

}  // namespace colony::data
