// Files the data tests write: scratch directories, CIFAR-10 batches, IDX files (plain and gzipped).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace colony::data::testing {

// A fresh directory under Bazel's TEST_TMPDIR (or the system temp dir).
inline std::filesystem::path scratch_dir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::filesystem::path dir = std::filesystem::path(tmp ? tmp : std::filesystem::temp_directory_path().string()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_bytes(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline void write_gz(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb1");
  if (!f) throw std::runtime_error("cannot write " + path.string());
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

// The pixel value the fake CIFAR writer puts at byte p of record r of file f.
inline uint8_t cifar_pixel(int file, int64_t r, int64_t p) {
  return static_cast<uint8_t>((file * 31 + r * 7 + p) & 255);
}
inline uint8_t cifar_label(int file, int64_t r) { return static_cast<uint8_t>((file + r) % 10); }

// A CIFAR-10 binary batch of `records` records (10000 is the real size).
inline std::vector<uint8_t> cifar_batch(int file, int64_t records = 10000) {
  std::vector<uint8_t> bytes(static_cast<size_t>(records * 3073));
  for (int64_t r = 0; r < records; ++r) {
    uint8_t* rec = bytes.data() + r * 3073;
    rec[0] = cifar_label(file, r);
    for (int64_t p = 0; p < 3072; ++p) rec[1 + p] = cifar_pixel(file, r, p);
  }
  return bytes;
}

// File f of the train split is data_batch_{f}.bin (1..5); file 0 is test_batch.bin.
inline void write_cifar_dir(const std::filesystem::path& dir, bool train, bool test) {
  if (test) write_bytes(dir / "test_batch.bin", cifar_batch(0));
  if (train) {
    for (int f = 1; f <= 5; ++f) write_bytes(dir / ("data_batch_" + std::to_string(f) + ".bin"), cifar_batch(f));
  }
}

inline void put_be32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
}

// An IDX file of unsigned bytes: magic 0x0000080D, the sizes, then `data`.
inline std::vector<uint8_t> idx_file(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out;
  put_be32(out, 0x00000800u | static_cast<uint32_t>(dims.size()));
  for (uint32_t d : dims) put_be32(out, d);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

inline uint8_t mnist_pixel(int64_t i, int64_t p) { return static_cast<uint8_t>((i * 3 + p * 5) & 255); }
inline uint8_t mnist_label(int64_t i) { return static_cast<uint8_t>((i * 7) % 10); }

// n images of rows x cols and their labels as IDX files in `dir` with the given prefix ("train"/"t10k").
inline void write_mnist(const std::filesystem::path& dir, const std::string& prefix, uint32_t n, bool gz,
                        uint32_t rows = 28, uint32_t cols = 28) {
  std::vector<uint8_t> pixels(size_t(n) * rows * cols), labels(n);
  for (uint32_t i = 0; i < n; ++i) {
    labels[i] = mnist_label(i);
    for (uint32_t p = 0; p < rows * cols; ++p) pixels[size_t(i) * rows * cols + p] = mnist_pixel(i, p);
  }
  const auto images = idx_file({n, rows, cols}, pixels), lab = idx_file({n}, labels);
  const std::string img_name = prefix + "-images-idx3-ubyte", lab_name = prefix + "-labels-idx1-ubyte";
  if (gz) {
    write_gz(dir / (img_name + ".gz"), images);
    write_gz(dir / (lab_name + ".gz"), lab);
  } else {
    write_bytes(dir / img_name, images);
    write_bytes(dir / lab_name, lab);
  }
}

}  // namespace colony::data::testing
