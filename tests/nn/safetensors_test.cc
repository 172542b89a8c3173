#include "nn/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "nn/atomic_file.h"
#include "tensor/raw_ops.h"
#include "tests/test_util.h"

namespace colony::io {
namespace {

using colony::testing::throws_with;

std::string header_of(const std::string& bytes) {
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return bytes.substr(8, len);
}

// A file with a hand-written header, as another implementation would produce it.
std::string make_file(const std::string& header, const std::string& data) {
  std::string out;
  uint64_t len = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  return out + header + data;
}

TEST(Safetensors, RoundTripEveryDtype) {
  NamedTensors in;
  for (DType t : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool}) {
    Tensor x = raw::to(raw::reshape(raw::arange(0, 6, 1, TensorOptions(kFloat64)), {2, 3}), kCPU, t);
    in.emplace_back(std::string("t_") + dtype_name(t), x);
  }
  in.emplace_back("transposed", raw::transpose(raw::tensor({{1, 2, 3}, {4, 5, 6}}), 0, 1));
  in.emplace_back("scalar", raw::scalar_tensor(7.0, kFloat64));
  in.emplace_back("empty", raw::zeros({0, 4}));
  std::string bytes = encode_safetensors(in, {{"epoch", "3"}});
  EXPECT_EQ(header_of(bytes).size() % 8, 0u);  // data starts 8-byte aligned
  SafetensorsContents out = decode_safetensors(bytes, "mem");
  ASSERT_EQ(out.tensors.size(), in.size());
  EXPECT_EQ(out.metadata.at("epoch"), "3");
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out.tensors[i].first, in[i].first);
    EXPECT_EQ(out.tensors[i].second.dtype(), in[i].second.dtype());
    EXPECT_TRUE(raw::equal(out.tensors[i].second, in[i].second)) << in[i].first;
  }
}

TEST(Safetensors, HeaderIsThePublicFormat) {
  std::string bytes = encode_safetensors({{"w", raw::ones({2}, kFloat32)}});
  std::string h = header_of(bytes);
  EXPECT_NE(h.find("\"w\":{\"data_offsets\":[0,8],\"dtype\":\"F32\",\"shape\":[2]}"), std::string::npos) << h;
  // Raw little-endian float 1.0 twice.
  EXPECT_EQ(bytes.substr(bytes.size() - 8), std::string("\x00\x00\x80\x3f\x00\x00\x80\x3f", 8));
}

TEST(Safetensors, ReadsAForeignFile) {
  std::string data("\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00", 16);
  std::string file = make_file(R"({"b":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},"__metadata__":{"format":"pt"}})", data);
  SafetensorsContents c = decode_safetensors(file, "foreign");
  ASSERT_EQ(c.tensors.size(), 1u);
  EXPECT_EQ(colony::testing::values(c.tensors[0].second), (std::vector<double>{1, 2}));
  EXPECT_EQ(c.metadata.at("format"), "pt");
}

TEST(Safetensors, RejectsMalformedFiles) {
  std::string good = encode_safetensors({{"w", raw::ones({4})}});
  EXPECT_TRUE(throws_with([&] { decode_safetensors("abc", "f.st"); }, "safetensors f.st: file is 3 bytes"));
  EXPECT_TRUE(throws_with([&] { decode_safetensors(good.substr(0, good.size() - 3), "f.st"); }, "truncated"));
  EXPECT_TRUE(throws_with([&] { decode_safetensors(good.substr(0, 12), "f.st"); }, "truncated: header needs"));
  EXPECT_TRUE(throws_with([&] { decode_safetensors(good + "xx", "f.st"); }, "2 trailing bytes"));
  EXPECT_TRUE(throws_with([&] { decode_safetensors(make_file("{not json", ""), "f.st"); }, "malformed JSON header"));
  EXPECT_TRUE(throws_with([&] { decode_safetensors(make_file("[1,2]", ""), "f.st"); }, "header is not a JSON object"));
  EXPECT_TRUE(throws_with(
      [&] { decode_safetensors(make_file(R"({"a":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", std::string(8, 0)), "f"); },
      "unsupported dtype \"C64\""));
  EXPECT_TRUE(throws_with(
      [&] { decode_safetensors(make_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, 0)), "f"); },
      "needs 12 bytes, data_offsets give 8"));
  EXPECT_TRUE(throws_with(
      [&] {
        decode_safetensors(make_file(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
                                     std::string(3, 0)), "f");
      },
      "overlapping or non-contiguous"));
  EXPECT_TRUE(throws_with([&] { decode_safetensors(make_file(R"({"a":{"dtype":"U8"}})", ""), "f"); }, "needs \"dtype\""));
  EXPECT_TRUE(throws_with(
      [&] { decode_safetensors(make_file(R"({"a":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}})", "\x07"), "f"); },
      "BOOL byte other than 0 or 1"));
  std::string huge("\xff\xff\xff\xff\xff\xff\xff\x7f", 8);
  EXPECT_TRUE(throws_with([&] { decode_safetensors(huge, "f"); }, "exceeds the 100 MB limit"));
}

// A file claiming [2^62] float32s: 2^64 bytes wrap to 0 in unchecked arithmetic, so the empty data
// section "matched" and the tensor was later read out of bounds.
TEST(Safetensors, RejectsShapesWhoseByteCountOverflows) {
  EXPECT_TRUE(throws_with(
      [&] { decode_safetensors(make_file(R"({"big":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", ""), "f.st"); },
      "safetensors f.st: tensor \"big\" of shape [4611686018427387904] and dtype float32 would need more bytes"));
  EXPECT_TRUE(throws_with(
      [&] { decode_safetensors(make_file(R"({"big":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", ""), "f.st"); },
      "tensor \"big\" of shape [4294967296, 4294967296]"));
  EXPECT_TRUE(throws_with(
      [&] { decode_safetensors(make_file(R"({"big":{"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,0]}})", ""), "f.st"); },
      "tensor \"big\" has dimension 9223372036854775808, more than int64 holds"));
}

TEST(Safetensors, HeaderNumberOverflowNamesTheFile) {
  // nlohmann reports 1e400 as out_of_range, not parse_error: it escaped without the file's name.
  EXPECT_TRUE(throws_with(
      [&] { decode_safetensors(make_file(R"({"__metadata__":{},"a":1e400})", ""), "f.st"); },
      "safetensors f.st: malformed JSON header"));
}

TEST(Safetensors, DeepNestingIsRefusedBeforeParsing) {
  // 10 MB of '[' (the probe used 50 MB: 3.7 GB and 13 s inside the parser before it failed).
  const std::string deep(10'000'000, '[');
  EXPECT_TRUE(throws_with([&] { decode_safetensors(make_file(deep, ""), "f.st"); },
                          "safetensors f.st: header nests arrays and objects more than 128 deep"));
  // Brackets inside strings do not count.
  const std::string name = std::string(200, '[') + "\\\"{";
  std::string file = make_file(R"({"__metadata__":{"k":")" + name + R"("}})", "");
  EXPECT_EQ(decode_safetensors(file, "f.st").metadata.at("k"), std::string(200, '[') + "\"{");
}

TEST(Safetensors, DuplicateKeysAreAnError) {
  EXPECT_TRUE(throws_with(
      [&] {
        decode_safetensors(make_file(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
                                     std::string(1, 0)), "f.st");
      },
      "safetensors f.st: header has the key \"a\" twice in one object"));
  EXPECT_TRUE(throws_with(
      [&] { decode_safetensors(make_file(R"({"__metadata__":{"epoch":"1","epoch":"9"}})", ""), "f.st"); },
      "the key \"epoch\" twice"));
  // The same key in two different objects is fine.
  std::string ok = make_file(R"({"__metadata__":{"dtype":"x"},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", std::string(1, 0));
  EXPECT_EQ(decode_safetensors(ok, "f.st").tensors.size(), 1u);
}

TEST(Safetensors, SaveIsAtomicAndLoadNamesTheFile) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "/model.safetensors";
  save_safetensors(path, {{"a", raw::ones({3})}});
  save_safetensors(path, {{"a", raw::zeros({3})}});  // overwrite in place
  SafetensorsContents c = load_safetensors(path);
  EXPECT_EQ(colony::testing::values(c.tensors[0].second), (std::vector<double>{0, 0, 0}));
  // No temporary file is left beside it.
  EXPECT_NE(access(temporary_path_for(path).c_str(), F_OK), 0);
  EXPECT_TRUE(throws_with([&] { load_safetensors(dir + "/missing.safetensors"); }, "missing.safetensors"));
  EXPECT_TRUE(throws_with([&] { save_safetensors("/nonexistent-dir/x.safetensors", {}); }, "cannot create"));
}

}  // namespace
}  // namespace colony::io
