// PyTorch's TCPStore wire protocol (torch/csrc/distributed/c10d/TCPStoreBackend.hpp and
// TCPStore.cpp; the same for its libuv and classic servers, checked against torch 2.15's):
//
//   hello      client: u8 VALIDATE, u32 0x3C85F7CE; then u8 PING, u32 nonce   server: u32 nonce
//   string     u64 length, then the bytes (keys and values alike); integers little-endian
//   SET         key, value                       no reply
//   GET         key                              value (the key must exist: clients WAIT first)
//   ADD         key, i64 delta                   i64 new value
//   CHECK       u64 count, keys                  u8 0 READY / 1 NOT_READY
//   WAIT        u64 count, keys                  u8 0 STOP_WAITING once all exist
//   CANCEL_WAIT                                  u8 1 WAIT_CANCELED (after a STOP_WAITING that raced it)
//   COMPARE_SET key, expected, desired           the value afterwards (expected when the key is
//                                                absent and expected was not empty)
//   DELETE_KEY  key                              i64 keys deleted
//
// Encoders for the client and one decoder for requests (the test server's, and a fuzz target's),
// which never reads past the buffer and refuses fields over the caps below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "distributed/store/store.h"

namespace colony::dist::torch_store {

constexpr uint32_t kValidationMagic = 0x3C85F7CE;

enum class Query : uint8_t {
  kValidate = 0,
  kSet = 1,
  kCompareSet = 2,
  kGet = 3,
  kAdd = 4,
  kCheck = 5,
  kWait = 6,
  kGetNumKeys = 7,
  kDeleteKey = 8,
  kAppend = 9,
  kMultiGet = 10,
  kMultiSet = 11,
  kCancelWait = 12,
  kPing = 13,
};

constexpr uint8_t kReady = 0, kNotReady = 1;             // CHECK's reply
constexpr uint8_t kStopWaiting = 0, kWaitCanceled = 1;   // WAIT's and CANCEL_WAIT's

// Caps on what either side accepts: keys are names, values are small rendezvous records.
constexpr size_t kMaxKey = 4096;
constexpr size_t kMaxValue = size_t{64} << 20;
constexpr size_t kMaxKeys = 1024;

struct Request {
  Query query = Query::kValidate;
  std::vector<std::string> keys;  // SET, GET, ADD, COMPARE_SET, DELETE_KEY: one; CHECK, WAIT: any
  std::vector<Bytes> values;      // SET: value; COMPARE_SET: expected, desired
  int64_t delta = 0;              // ADD
  uint32_t number = 0;            // VALIDATE: the magic; PING: the nonce
};

Bytes encode(const Request& r);

enum class Decoded { kNeedMore, kDone, kBad };
struct DecodeResult {
  Decoded status = Decoded::kNeedMore;
  size_t consumed = 0;  // kDone: the request's length
  std::string error;    // kBad: what was wrong
};
// Decodes the first request in data[0, n): kNeedMore when it has not fully arrived, kBad for an
// unknown query, a field over its cap, or a query this client never sends (APPEND, MULTI_*).
DecodeResult decode(const uint8_t* data, size_t n, Request* out);

void put_u64(Bytes& b, uint64_t v);
void put_string(Bytes& b, const void* data, size_t n);
uint64_t read_u64(const uint8_t* p);

}  // namespace colony::dist::torch_store
