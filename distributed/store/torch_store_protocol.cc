#include "distributed/store/torch_store_protocol.h"

#include <stdexcept>

namespace colony::dist::torch_store {
namespace {

void put_u32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Reads fields from a buffer that may hold only part of a request.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  size_t pos() const { return pos_; }
  bool u8(uint8_t& v) {
    if (n_ - pos_ < 1) return false;
    v = p_[pos_++];
    return true;
  }
  bool u32(uint32_t& v) {
    if (n_ - pos_ < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p_[pos_ + i]) << (8 * i);
    pos_ += 4;
    return true;
  }
  bool u64(uint64_t& v) {
    if (n_ - pos_ < 8) return false;
    v = read_u64(p_ + pos_);
    pos_ += 8;
    return true;
  }
  // False when incomplete; sets `too_long` when the length is over `cap` (never completes).
  bool string(Bytes& out, size_t cap, bool& too_long) {
    uint64_t len;
    if (!u64(len)) return false;
    if (len > cap) {
      too_long = true;
      return false;
    }
    if (n_ - pos_ < len) return false;
    out.assign(p_ + pos_, p_ + pos_ + len);
    pos_ += static_cast<size_t>(len);
    return true;
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

}  // namespace

void put_u64(Bytes& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void put_string(Bytes& b, const void* data, size_t n) {
  put_u64(b, n);
  const auto* p = static_cast<const uint8_t*>(data);
  b.insert(b.end(), p, p + n);
}

uint64_t read_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

Bytes encode(const Request& r) {
  Bytes b;
  b.push_back(static_cast<uint8_t>(r.query));
  const auto key = [&](size_t i) { put_string(b, r.keys.at(i).data(), r.keys.at(i).size()); };
  const auto value = [&](size_t i) { put_string(b, r.values.at(i).data(), r.values.at(i).size()); };
  switch (r.query) {
    case Query::kValidate:
    case Query::kPing:
      put_u32(b, r.number);
      break;
    case Query::kSet:
      key(0);
      value(0);
      break;
    case Query::kGet:
    case Query::kDeleteKey:
      key(0);
      break;
    case Query::kAdd:
      key(0);
      put_u64(b, static_cast<uint64_t>(r.delta));
      break;
    case Query::kCompareSet:
      key(0);
      value(0);
      value(1);
      break;
    case Query::kCheck:
    case Query::kWait:
      put_u64(b, r.keys.size());
      for (size_t i = 0; i < r.keys.size(); ++i) key(i);
      break;
    case Query::kCancelWait:
    case Query::kGetNumKeys:
      break;
    default:
      throw std::invalid_argument("torch_store::encode: query " + std::to_string(static_cast<int>(r.query)) +
                                  " is not one Colony sends");
  }
  return b;
}

DecodeResult decode(const uint8_t* data, size_t n, Request* out) {
  Reader r(data, n);
  DecodeResult result;
  const auto bad = [&](std::string why) {
    result.status = Decoded::kBad;
    result.error = std::move(why);
    return result;
  };
  uint8_t q;
  if (!r.u8(q)) return result;
  Request req;
  req.query = static_cast<Query>(q);
  bool too_long = false;
  const auto key = [&]() {
    Bytes k;
    if (!r.string(k, kMaxKey, too_long)) return false;
    req.keys.emplace_back(k.begin(), k.end());
    return true;
  };
  const auto value = [&]() {
    Bytes v;
    if (!r.string(v, kMaxValue, too_long)) return false;
    req.values.push_back(std::move(v));
    return true;
  };
  bool complete = false;
  switch (req.query) {
    case Query::kValidate:
    case Query::kPing:
      complete = r.u32(req.number);
      break;
    case Query::kSet:
      complete = key() && value();
      break;
    case Query::kGet:
    case Query::kDeleteKey:
      complete = key();
      break;
    case Query::kAdd: {
      uint64_t d;
      complete = key() && r.u64(d);
      if (complete) req.delta = static_cast<int64_t>(d);
      break;
    }
    case Query::kCompareSet:
      complete = key() && value() && value();
      break;
    case Query::kCheck:
    case Query::kWait: {
      uint64_t count;
      if (!r.u64(count)) break;
      if (count > kMaxKeys) return bad("a request for " + std::to_string(count) + " keys (at most 1024)");
      complete = true;
      for (uint64_t i = 0; i < count && complete; ++i) complete = key();
      break;
    }
    case Query::kCancelWait:
    case Query::kGetNumKeys:
      complete = true;
      break;
    default:
      return bad("unknown or unsupported query " + std::to_string(q));
  }
  if (too_long) return bad("a key over 4 KiB or a value over 64 MiB");
  if (!complete) return result;
  if (req.query == Query::kValidate && req.number != kValidationMagic) return bad("wrong validation number");
  result.status = Decoded::kDone;
  result.consumed = r.pos();
  *out = std::move(req);
  return result;
}

}  // namespace colony::dist::torch_store
