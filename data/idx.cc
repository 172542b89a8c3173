#include "data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "ops/raw_ops.h"

namespace colony::data {
namespace fs = std::filesystem;

namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

std::string hex32(uint32_t v) {
  std::ostringstream s;
  s << "0x" << std::hex;
  s.width(8);
  s.fill('0');
  s << v;
  return s.str();
}

// Reads up to n bytes; returns how many arrived. Throws on a zlib error (a corrupt gzip stream);
// a truncated one is reported by the callers as too short.
int64_t read_some(gzFile f, void* dst, int64_t n, const std::string& path) {
  int64_t done = 0;
  auto* out = static_cast<char*>(dst);
  while (done < n) {
    const auto chunk = static_cast<unsigned>(std::min<int64_t>(n - done, 1 << 30));
    const int got = gzread(f, out + done, chunk);
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(f, &code);
      throw std::runtime_error("read_idx: " + path + " is truncated or corrupt: " + (msg ? msg : "zlib error"));
    }
    if (got == 0) break;
    done += got;
  }
  // zlib reports a gzip stream cut short as an error only once the data runs out.
  int code = Z_OK;
  const char* msg = gzerror(f, &code);
  if (code != Z_OK && code != Z_STREAM_END) {
    throw std::runtime_error("read_idx: " + path + " is truncated or corrupt: " + (msg ? msg : "zlib error"));
  }
  return done;
}

}  // namespace

Tensor read_idx_ubyte(const std::string& path, int dims) {
  std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));
  if (!f) throw std::runtime_error("read_idx: cannot open " + path);
  uint8_t magic[4];
  if (read_some(f.get(), magic, 4, path) != 4) {
    throw std::runtime_error("read_idx: " + path + " is too short to hold an IDX header");
  }
  const uint32_t got_magic =
      (uint32_t(magic[0]) << 24) | (uint32_t(magic[1]) << 16) | (uint32_t(magic[2]) << 8) | magic[3];
  const uint32_t want_magic = 0x00000800u | static_cast<uint32_t>(dims);
  if (got_magic != want_magic) {
    throw std::runtime_error("read_idx: " + path + " has magic number " + hex32(got_magic) + ", expected " +
                             hex32(want_magic) + " (IDX, unsigned bytes, " + std::to_string(dims) +
                             " dimensions): not the expected IDX file, or corrupt");
  }
  Shape shape(dims);
  std::vector<uint8_t> header(4 * dims);
  if (read_some(f.get(), header.data(), 4 * dims, path) != 4 * dims) {
    throw std::runtime_error("read_idx: " + path + " is too short to hold its " + std::to_string(dims) +
                             " dimension sizes");
  }
  // The element count, and the product the tensor's strides take (a size of 0 counts as 1 there:
  // [0, 2^31, 2^31, 2^31] holds no byte but cannot be laid out).
  std::optional<int64_t> numel = 1, layout = 1;
  for (int d = 0; d < dims; ++d) {
    const uint8_t* b = header.data() + 4 * d;
    shape[d] = (int64_t(b[0]) << 24) | (int64_t(b[1]) << 16) | (int64_t(b[2]) << 8) | b[3];
    if (numel) numel = checked_mul(*numel, shape[d]);
    if (layout) layout = checked_mul(*layout, std::max<int64_t>(shape[d], 1));
  }
  if (!numel || !layout || *numel > (int64_t(1) << 40)) {
    throw std::runtime_error("read_idx: " + path + " claims an implausible shape " + shape_str(shape) +
                             " (more than 2^40 bytes): corrupt");
  }
  // The data is read in pieces before the tensor is allocated: a 20-byte file must not make the
  // reader allocate the terabyte its header claims. 16 MiB pieces: MNIST's 47 MB in three reads.
  std::vector<uint8_t> bytes;
  constexpr int64_t kPiece = int64_t{16} << 20;
  while (static_cast<int64_t>(bytes.size()) < *numel) {
    const size_t have = bytes.size();
    const int64_t want = std::min(kPiece, *numel - static_cast<int64_t>(have));
    bytes.resize(have + static_cast<size_t>(want));
    const int64_t got = read_some(f.get(), bytes.data() + have, want, path);
    bytes.resize(have + static_cast<size_t>(got));
    if (got < want) break;
  }
  if (static_cast<int64_t>(bytes.size()) != *numel) {
    throw std::runtime_error("read_idx: " + path + " is truncated: its header promises " + shape_str(shape) + " = " +
                             std::to_string(*numel) + " bytes of data, found " + std::to_string(bytes.size()));
  }
  Tensor out = raw::empty(shape, kUInt8);
  if (!bytes.empty()) std::memcpy(out.data_ptr_raw(), bytes.data(), bytes.size());
  uint8_t extra;
  if (read_some(f.get(), &extra, 1, path) != 0) {
    throw std::runtime_error("read_idx: " + path + " holds more data than its header's shape " + shape_str(shape) +
                             " (" + std::to_string(*numel) + " bytes): corrupt or not this IDX file");
  }
  return out;
}

std::string find_idx_file(const std::string& root, const std::string& name) {
  std::error_code ec;
  const fs::path plain = fs::path(root) / name;
  if (fs::is_regular_file(plain, ec)) return plain.string();
  const fs::path gz = fs::path(root) / (name + ".gz");
  if (fs::is_regular_file(gz, ec)) return gz.string();
  return "";
}

InMemoryImageDataset load_idx_dataset(const std::string& root, Split split, const std::string& dataset,
                                      const std::string& how_to_get) {
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  const std::string image_name = prefix + "-images-idx3-ubyte", label_name = prefix + "-labels-idx1-ubyte";
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    throw std::runtime_error(dataset + ": no directory " + fs::absolute(root, ec).string() + " (looked there for " +
                             image_name + "[.gz] and " + label_name + "[.gz]). " + how_to_get);
  }
  const std::string image_path = find_idx_file(root, image_name), label_path = find_idx_file(root, label_name);
  for (const auto& [path, name] : {std::pair{image_path, image_name}, std::pair{label_path, label_name}}) {
    if (path.empty()) {
      throw std::runtime_error(dataset + ": neither " + (fs::path(root) / name).string() + " nor " +
                               (fs::path(root) / (name + ".gz")).string() + " exists. " + how_to_get);
    }
  }
  Tensor images = read_idx_ubyte(image_path, 3);
  Tensor labels = read_idx_ubyte(label_path, 1);
  if (images.size(0) != labels.size(0)) {
    throw std::runtime_error(dataset + ": " + image_path + " holds " + std::to_string(images.size(0)) + " images but " +
                             label_path + " holds " + std::to_string(labels.size(0)) + " labels");
  }
  if (images.size(1) == 0 || images.size(2) == 0) {
    throw std::runtime_error(dataset + ": " + image_path + " holds images of size " + std::to_string(images.size(1)) +
                             "x" + std::to_string(images.size(2)));
  }
  const int64_t n = labels.size(0);
  Tensor targets = raw::empty({n}, kInt64);
  const uint8_t* l = labels.data_ptr<uint8_t>();
  int64_t* t = targets.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    if (l[i] > 9) {
      throw std::runtime_error(dataset + ": " + label_path + ": label " + std::to_string(i) + " is " +
                               std::to_string(l[i]) + ", expected 0..9");
    }
    t[i] = l[i];
  }
  return InMemoryImageDataset(raw::view(images, {n, 1, images.size(1), images.size(2)}), targets);
}

}  // namespace colony::data
