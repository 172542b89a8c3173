// ProcessGroup over Gloo (Debian's libgloo, TCP transport) for CPU tensors.
//
//   auto store = std::make_shared<TCPStore>(...);
//   auto pg = std::make_shared<ProcessGroupGloo>(store, rank, world_size);
//   auto work = pg->allreduce(grads, ReduceOp::kAvg);   // returns at once
//   ...                                                  // compute meanwhile
//   work->wait();
//
// - Construction is the rendezvous: every rank publishes its address in the store and connects to
//   every other rank (a full mesh), within the store's timeout. Several groups on one store are
//   fine: the n-th group a rank creates meets the n-th group of the others.
// - Collectives run one at a time, in call order (FIFO), so the k-th call on every rank is
//   collective #k: on the group's communication thread, or on the thread that waits for one the
//   communication thread has not picked up yet when only the PeerChannel is involved (a barrier,
//   a small two-rank allreduce), which saves a thread hand-off per collective. Before running it
//   the ranks exchange a 40-byte fingerprint (sequence number, op, dtype, element count, root /
//   reduce op) on the PeerChannel (comm/peer_channel.h: a TCP connection per pair of
//   ranks of its own, read by the thread that runs the collective, so no gloo socket thread has to
//   be scheduled for a message to arrive): if any rank differs, the Work fails on every
//   rank with CollectiveError listing what each rank called, and the group stays usable.
//   barrier() is exactly that exchange.
// - Timeouts: ProcessGroupOptions::timeout (default 10 min), or CollectiveOptions::timeout per
//   call, bound the fingerprint exchange plus the collective, measured from when it starts running.
//   Expiry gives TimeoutError "allreduce #12 timed out after 500 ms ...". After a timeout or a
//   lost peer the group is unusable (gloo closes its connections) and later calls fail at once.
// - Waiting: a wait() that runs the collective itself polls the peer channel's sockets for up to
//   2 ms before it sleeps (the other rank is usually that close), yielding the core between polls,
//   so the message is taken in as it arrives rather than after a scheduler wake-up; the
//   communication thread never polls, as it would take the core from the computation it overlaps.
// - Algorithms: in a group of two, an allreduce of up to 2 MiB travels with the fingerprint (one
//   message each way, reduced in rank order so both ranks get bit-identical results); when every
//   rank shares memory with every other, allreduce, reduce-scatter and allgather all go through
//   the shared-memory outboxes in 256 KiB chunks (each rank reads its part of every rank's chunk;
//   sums in rank order; an allgather, which sums nothing, in the channel's whole message, 2 MiB in
//   a group of two); otherwise gloo's ring allreduce (in place, no copies; segments of at most
//   1 MiB pipeline the transfer), gloo's binomial-tree broadcast and ring allgather, and a ring
//   reduce-scatter of our own (gloo 2022 has none with timeouts) that moves each chunk once, in
//   256 KiB segments each forwarded as soon as it is reduced.
// - float16/bfloat16 reduce in float with a custom reduction (see reduce.h).
//
// Threading: collectives may be called from any one thread at a time per group (DDP's backward
// thread, say); Work handles may be waited on from any thread.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distributed/comm/process_group.h"
#include "distributed/store/store.h"

namespace colony::dist {

class ProcessGroupGloo : public ProcessGroup {
 public:
  // Blocks until every rank has joined (or the store's timeout passes: TimeoutError naming the
  // missing ranks' keys). Throws std::invalid_argument for rank/size out of range.
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, ProcessGroupOptions options = {});
  // Fails collectives that have not started ("destroyed before it ran"), waits briefly for a
  // running one, and never hangs: if the communication thread is stuck inside gloo (a peer died
  // mid-collective; gloo only returns at the collective's timeout, and has no way to cancel an
  // operation from another thread), it is detached instead of joined. It owns everything it
  // touches (shared state, gloo context), so it exits safely whenever gloo lets it go.
  ~ProcessGroupGloo() override;
  ProcessGroupGloo(const ProcessGroupGloo&) = delete;
  ProcessGroupGloo& operator=(const ProcessGroupGloo&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend_name() const override { return "gloo"; }
  uint64_t collectives_started() const override;

  std::shared_ptr<Work> allreduce(Tensor& tensor, ReduceOp op = ReduceOp::kSum,
                                  const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> broadcast(Tensor& tensor, int root = 0, const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> allgather(std::vector<Tensor>& outputs, const Tensor& input,
                                  const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                       ReduceOp op = ReduceOp::kSum, const CollectiveOptions& opts = {}) override;
  std::shared_ptr<Work> barrier(const CollectiveOptions& opts = {}) override;

  // Fails the running collective, the queued ones and all later ones with CollectiveError
  // "<collective> aborted: <reason>" and wakes every waiter at once. Never blocks: it interrupts a
  // wait for a PeerChannel message, but gloo's own algorithms cannot be interrupted and finish at
  // their timeout.
  void abort(const std::string& reason) override;

  // The address gloo listens on and why it was chosen, e.g.
  // "127.0.0.1 (MASTER_ADDR 127.0.0.1 is a loopback address)".
  const std::string& transport_description() const { return transport_description_; }

  // How many peers share this rank's machine and exchange the collectives' first message (the
  // fingerprint) through shared memory rather than TCP; 0 with COLONY_SHM=0. When every rank
  // shares memory with every other, allreduce goes that way too, at any size.
  int shared_memory_peers() const;

  struct State;  // shared with the communication thread; defined in the .cc

 private:
  int rank_;
  int size_;
  std::string transport_description_;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace colony::dist
