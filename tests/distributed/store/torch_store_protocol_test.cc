// The encoder and decoder of PyTorch's TCPStore protocol against bytes written out by hand from
// PyTorch's own code (torch/csrc/distributed/c10d/TCPStore.cpp and TCPStoreBackend.hpp):
//   QueryType  VALIDATE 0, SET 1, COMPARE_SET 2, GET 3, ADD 4, CHECK 5, WAIT 6, GETNUMKEYS 7,
//              DELETE_KEY 8, APPEND 9, MULTI_GET 10, MULTI_SET 11, CANCEL_WAIT 12, PING 13
//   SendBuffer appendString / appendBytes: u64 length, then the bytes; appendValue<T>: T's bytes
//              as the host lays them out (little-endian on the x86-64 and ARM hosts PyTorch runs on)
//   VALIDATE   u32 0x3C85F7CE; PING: u32 nonce; ADD: i64 delta; CHECK / WAIT: u64 count, keys
// A test that encodes with Colony's encoder and decodes with Colony's decoder passes with a wrong
// opcode or a byte order flipped on both sides; these do not.
#include "distributed/store/torch_store_protocol.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/distributed/store/raw_socket.h"

namespace colony::dist::torch_store {
namespace {

Bytes hex(const std::string& text) { return colony::testing::from_hex(text); }

Request request(Query q, std::vector<std::string> keys = {}, std::vector<Bytes> values = {}) {
  Request r;
  r.query = q;
  r.keys = std::move(keys);
  r.values = std::move(values);
  return r;
}

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

// Each request as PyTorch's client sends it.
struct Case {
  const char* what;
  Request request;
  const char* bytes;
};

std::vector<Case> cases() {
  Request validate = request(Query::kValidate);
  validate.number = 0x3C85F7CE;
  Request ping = request(Query::kPing);
  ping.number = 0x01020304;
  Request add = request(Query::kAdd, {"/n"});
  add.delta = -2;
  Request big_add = request(Query::kAdd, {"/n"});
  big_add.delta = 0x0102030405060708;
  return {
      {"VALIDATE", validate, "00 CEF7853C"},
      {"PING", ping, "0D 04030201"},
      {"SET", request(Query::kSet, {"/a"}, {text("one")}), "01 0200000000000000 2F61 0300000000000000 6F6E65"},
      {"COMPARE_SET", request(Query::kCompareSet, {"/a"}, {text("one"), text("two")}),
       "02 0200000000000000 2F61 0300000000000000 6F6E65 0300000000000000 74776F"},
      {"GET", request(Query::kGet, {"/a"}), "03 0200000000000000 2F61"},
      {"ADD", add, "04 0200000000000000 2F6E FEFFFFFFFFFFFFFF"},
      {"ADD large", big_add, "04 0200000000000000 2F6E 0807060504030201"},
      {"CHECK", request(Query::kCheck, {"/a", "/bc"}),
       "05 0200000000000000 0200000000000000 2F61 0300000000000000 2F6263"},
      {"WAIT", request(Query::kWait, {"/a"}), "06 0100000000000000 0200000000000000 2F61"},
      {"GETNUMKEYS", request(Query::kGetNumKeys), "07"},
      {"DELETE_KEY", request(Query::kDeleteKey, {"/a"}), "08 0200000000000000 2F61"},
      {"CANCEL_WAIT", request(Query::kCancelWait), "0C"},
  };
}

TEST(TorchStoreProtocol, EncodesEveryQueryAsPyTorchsClientDoes) {
  for (const Case& c : cases()) EXPECT_EQ(encode(c.request), hex(c.bytes)) << c.what;
  // A length over 255 shows the byte order of the length itself.
  const Bytes value(0x0102, 'v');
  Bytes expected = hex("01 0100000000000000 6B 0201000000000000");
  expected.insert(expected.end(), value.begin(), value.end());
  EXPECT_EQ(encode(request(Query::kSet, {"k"}, {value})), expected);
}

TEST(TorchStoreProtocol, DecodesWhatPyTorchsClientSends) {
  for (const Case& c : cases()) {
    const Bytes bytes = hex(c.bytes);
    Request got;
    const DecodeResult d = decode(bytes.data(), bytes.size(), &got);
    ASSERT_EQ(d.status, Decoded::kDone) << c.what << ": " << d.error;
    EXPECT_EQ(d.consumed, bytes.size()) << c.what;
    EXPECT_EQ(got.query, c.request.query) << c.what;
    EXPECT_EQ(got.keys, c.request.keys) << c.what;
    EXPECT_EQ(got.values, c.request.values) << c.what;
    EXPECT_EQ(got.delta, c.request.delta) << c.what;
    EXPECT_EQ(got.number, c.request.number) << c.what;
    // Every prefix is incomplete, never bad and never read past.
    for (size_t n = 0; n < bytes.size(); ++n) {
      const Bytes part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      EXPECT_EQ(decode(part.data(), part.size(), &got).status, Decoded::kNeedMore) << c.what << " cut at " << n;
    }
  }
}

TEST(TorchStoreProtocol, RefusesWhatItCannotServe) {
  auto status_of = [](const std::string& bytes) {
    const Bytes b = hex(bytes);
    Request r;
    return decode(b.data(), b.size(), &r);
  };
  EXPECT_EQ(status_of("00 3C85F7CE").status, Decoded::kBad);  // the magic in the wrong byte order
  EXPECT_EQ(status_of("09 0100000000000000 61").status, Decoded::kBad);  // APPEND: never sent by Colony
  EXPECT_EQ(status_of("0E").status, Decoded::kBad);                      // past PING
  EXPECT_EQ(status_of("03 0110000000000000").status, Decoded::kBad);     // a 4097-byte key
  EXPECT_EQ(status_of("01 0100000000000000 61 0100000400000000").status, Decoded::kBad);  // a 64 MiB + 1 value
  EXPECT_EQ(status_of("06 0104000000000000").status, Decoded::kBad);  // 1025 keys
  EXPECT_NE(status_of("06 0104000000000000").error.find("1025 keys"), std::string::npos);
}

}  // namespace
}  // namespace colony::dist::torch_store
