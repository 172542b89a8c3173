// The data movement of each collective over a connected gloo context, in place on raw buffers.
// Internal to the Gloo backend: the caller has checked the arguments and agreed on them with the
// other ranks (fingerprints, on the PeerChannel), and gives every call a tag no concurrent call uses.
//
// Every function throws what gloo throws (gloo::IoException and friends) on a timeout or a broken
// connection; the caller turns that into words.
#pragma once

#include <gloo/context.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "distributed/gloo/reduce.h"

namespace colony::dist::gloo_detail {

using GlooContext = std::shared_ptr<::gloo::Context>;

// gloo's ring allreduce, in place on n elements of element_size bytes reduced with fn. The chunks
// travel in segments of at most 1 MiB, two in flight, so transfer overlaps reduction.
void allreduce_in_place(const GlooContext& ctx, void* data, size_t n, size_t element_size, ReduceFn fn,
                        uint32_t tag, std::chrono::milliseconds timeout);

// gloo's binomial-tree broadcast of `bytes` bytes from root, in place.
void broadcast_in_place(const GlooContext& ctx, void* data, size_t bytes, int root, uint32_t tag,
                        std::chrono::milliseconds timeout);

// gloo's ring allgather over `bytes` bytes made of size() equal blocks, this rank's already filled.
void allgather_in_place(const GlooContext& ctx, void* data, size_t bytes, uint32_t tag,
                        std::chrono::milliseconds timeout);

// Ring reduce-scatter of our own (gloo 2022 has only an old-style one without timeouts): out gets
// the reduction over ranks of in[rank]. in has size() chunks of n elements; out may alias
// in[rank] but no other chunk. Each chunk crosses each link once (an allreduce would move the data
// twice).
//
// `peer_lost` (polled every 20 ms from a thread of its own while the ring runs) says whether some
// peer is gone; when it has said so for 200 ms and the ring still runs, every wait of the ring is
// aborted and it throws. Without it a rank could wait until its timeout on a live peer that gave
// up: gloo fails only the transfers pending on a dead peer's connection, and a rank whose right
// neighbour died waits on a receive from its left one (which, having seen the death, never
// sends). The 200 ms let a ring finish whose peer exited in order after its last send (the data
// from the live ones is on its way).
void ring_reduce_scatter(const GlooContext& ctx, const std::vector<const void*>& in, void* out, size_t n,
                         size_t element_size, ReduceFn fn, uint32_t tag, std::chrono::milliseconds timeout,
                         std::function<bool()> peer_lost = nullptr);

}  // namespace colony::dist::gloo_detail
