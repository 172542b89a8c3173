// Fuzz target: the decoder of PyTorch's TCPStore requests (torch_store::decode), as a server uses it
// on one connection's byte stream: decode the first request, drop its bytes, repeat until the
// rest is incomplete or refused. Each decoded request must re-encode to exactly the bytes it came
// from (the protocol has one spelling of each request), and the decoder must never claim more
// bytes than it was given.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "distributed/store/torch_store_protocol.h"

namespace ts = colony::dist::torch_store;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t pos = 0;
  while (pos < size) {
    ts::Request r;
    const ts::DecodeResult d = ts::decode(data + pos, size - pos, &r);
    if (d.status != ts::Decoded::kDone) break;
    if (d.consumed == 0 || d.consumed > size - pos) {
      std::fprintf(stderr, "fuzz: decode consumed %zu of %zu bytes\n", d.consumed, size - pos);
      std::abort();
    }
    const colony::dist::Bytes again = ts::encode(r);
    if (again.size() != d.consumed || std::memcmp(again.data(), data + pos, d.consumed) != 0) {
      std::fprintf(stderr, "fuzz: query %d re-encodes to %zu bytes that differ from the %zu decoded\n",
                   static_cast<int>(r.query), again.size(), d.consumed);
      std::abort();
    }
    pos += d.consumed;
  }
  return 0;
}
