#include "data/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/cifar10.h"
#include "tests/data/data_test_util.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

namespace fs = std::filesystem;
using colony::testing::throws_with;
using namespace colony::data::testing;

struct Entry {
  std::string name;
  std::string contents;
  bool directory = false;
};

// A .tar.gz made with libarchive's writer.
void write_tar_gz(const fs::path& path, const std::vector<Entry>& entries) {
  struct archive* a = archive_write_new();
  archive_write_add_filter_gzip(a);
  archive_write_set_format_pax_restricted(a);
  archive_write_set_filter_option(a, "gzip", "compression-level", "1");  // speed over size
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK) << archive_error_string(a);
  for (const auto& e : entries) {
    struct archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.name.c_str());
    archive_entry_set_filetype(entry, e.directory ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(entry, e.directory ? 0755 : 0644);
    archive_entry_set_size(entry, e.directory ? 0 : static_cast<la_int64_t>(e.contents.size()));
    ASSERT_EQ(archive_write_header(a, entry), ARCHIVE_OK) << archive_error_string(a);
    if (!e.directory) {
      // Written in chunks, as a large file would be.
      for (size_t off = 0; off < e.contents.size(); off += 1 << 20) {
        const size_t n = std::min<size_t>(1 << 20, e.contents.size() - off);
        ASSERT_EQ(archive_write_data(a, e.contents.data() + off, n), static_cast<la_ssize_t>(n));
      }
    }
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ExtractTarGz, UnpacksFilesAndDirectories) {
  fs::path dir = scratch_dir("tar_plain");
  write_tar_gz(dir / "a.tar.gz",
               {{"top", "", true}, {"top/one.txt", "first file"}, {"top/sub/two.bin", std::string(5000, 'x')}});
  extract_tar_gz((dir / "a.tar.gz").string(), (dir / "out").string());
  EXPECT_EQ(read_text(dir / "out/top/one.txt"), "first file");
  EXPECT_EQ(read_text(dir / "out/top/sub/two.bin"), std::string(5000, 'x'));
}

TEST(ExtractTarGz, StripComponentsDropsTheTopDirectory) {
  fs::path dir = scratch_dir("tar_strip");
  write_tar_gz(dir / "a.tar.gz", {{"cifar-10-batches-bin/", "", true}, {"cifar-10-batches-bin/readme.html", "hello"}});
  extract_tar_gz((dir / "a.tar.gz").string(), (dir / "out").string(), 1);
  EXPECT_EQ(read_text(dir / "out/readme.html"), "hello");
  EXPECT_FALSE(fs::exists(dir / "out/cifar-10-batches-bin"));
}

TEST(ExtractTarGz, RefusesEntriesThatEscapeTheDestination) {
  fs::path dir = scratch_dir("tar_escape");
  write_tar_gz(dir / "dotdot.tar.gz", {{"../evil.txt", "gotcha"}});
  EXPECT_TRUE(throws_with([&] { extract_tar_gz((dir / "dotdot.tar.gz").string(), (dir / "out").string()); },
                          "'../evil.txt' contains '..'"));
  EXPECT_FALSE(fs::exists(dir / "evil.txt"));
  write_tar_gz(dir / "abs.tar.gz", {{(dir / "abs.txt").string(), "gotcha"}});
  EXPECT_TRUE(throws_with([&] { extract_tar_gz((dir / "abs.tar.gz").string(), (dir / "out").string()); },
                          "has an absolute path"));
  EXPECT_FALSE(fs::exists(dir / "abs.txt"));
}

TEST(ExtractTarGz, CorruptAndMissingArchivesAreNamed) {
  fs::path dir = scratch_dir("tar_corrupt");
  EXPECT_TRUE(throws_with([&] { extract_tar_gz((dir / "none.tar.gz").string(), (dir / "out").string()); },
                          (dir / "none.tar.gz").string() + " does not exist"));
  write_bytes(dir / "junk.tar.gz", std::vector<uint8_t>(1000, 0x5A));
  EXPECT_TRUE(throws_with([&] { extract_tar_gz((dir / "junk.tar.gz").string(), (dir / "out").string()); },
                          (dir / "junk.tar.gz").string()));
  // A valid archive cut in the middle of an entry's data.
  std::string big(200000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 2654435761u) >> 13);
  write_tar_gz(dir / "whole.tar.gz", {{"big.bin", big}});
  std::string whole = read_text(dir / "whole.tar.gz");
  std::vector<uint8_t> half(whole.begin(), whole.begin() + whole.size() / 2);
  write_bytes(dir / "half.tar.gz", half);
  EXPECT_TRUE(throws_with([&] { extract_tar_gz((dir / "half.tar.gz").string(), (dir / "out").string()); },
                          (dir / "half.tar.gz").string()));
}

TEST(DownloadFile, FetchesAFileUrl) {
  fs::path dir = scratch_dir("download_file_url");
  write_bytes(dir / "src.bin", {1, 2, 3, 4, 5});
  download_file("file://" + (dir / "src.bin").string(), (dir / "sub/dst.bin").string());
  EXPECT_EQ(read_text(dir / "sub/dst.bin"), std::string("\x01\x02\x03\x04\x05"));
  EXPECT_FALSE(fs::exists(dir / "sub/dst.bin.part"));
}

TEST(DownloadFile, FailureNamesTheUrlAndLeavesNoPartialFile) {
  fs::path dir = scratch_dir("download_fail");
  const std::string url = "file://" + (dir / "absent.bin").string();
  EXPECT_TRUE(throws_with([&] { download_file(url, (dir / "dst.bin").string()); }, "fetching " + url + " failed"));
  EXPECT_FALSE(fs::exists(dir / "dst.bin"));
  EXPECT_FALSE(fs::exists(dir / "dst.bin.part"));
  // Nothing listens on port 1 of the loopback interface: the connection is refused at once.
  EXPECT_TRUE(throws_with([&] { download_file("http://127.0.0.1:1/cifar.tar.gz", (dir / "dst.bin").string()); },
                          "http://127.0.0.1:1/cifar.tar.gz"));
  EXPECT_FALSE(fs::exists(dir / "dst.bin.part"));
}

std::string as_string(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

TEST(CIFAR10Download, FetchesUnpacksAndChecksTheArchive) {
  fs::path dir = scratch_dir("cifar_download");
  std::vector<Entry> entries = {{"cifar-10-batches-bin", "", true},
                                {"cifar-10-batches-bin/batches.meta.txt", "airplane\n"},
                                {"cifar-10-batches-bin/test_batch.bin", as_string(cifar_batch(0))}};
  for (int f = 1; f <= 5; ++f) {
    entries.push_back({"cifar-10-batches-bin/data_batch_" + std::to_string(f) + ".bin", as_string(cifar_batch(f))});
  }
  write_tar_gz(dir / "cifar-10-binary.tar.gz", entries);
  const fs::path root = dir / "data/cifar-10-batches-bin";
  CIFAR10::download(root.string(), "file://" + (dir / "cifar-10-binary.tar.gz").string());
  EXPECT_TRUE(CIFAR10::available(root.string()));
  EXPECT_FALSE(fs::exists(root / "cifar-10-binary.tar.gz"));  // the archive is removed once unpacked
  CIFAR10 test(root.string(), Split::kTest);
  EXPECT_EQ(test.get(3).target.item<int64_t>(), cifar_label(0, 3));
  // Already there: a second call does not fetch (the URL is unreachable).
  CIFAR10::download(root.string(), "http://127.0.0.1:1/unused.tar.gz");
}

TEST(CIFAR10Download, AnArchiveWithoutTheBatchesIsAnError) {
  fs::path dir = scratch_dir("cifar_download_wrong");
  write_tar_gz(dir / "wrong.tar.gz", {{"top/readme.txt", "not cifar"}});
  EXPECT_TRUE(throws_with(
      [&] { CIFAR10::download((dir / "root").string(), "file://" + (dir / "wrong.tar.gz").string()); }, "still lacks"));
}

}  // namespace
}  // namespace colony::data
