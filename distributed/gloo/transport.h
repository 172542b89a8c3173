// How the Gloo backend meets its peers: our Store seen as a gloo rendezvous store, the choice of
// the address gloo's TCP transport listens on, and the mapping of a broken connection to a rank.
// Internal to process_group_gloo.cc; a header of its own so tests can check the address choice.
#pragma once

#include <gloo/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/attr.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "distributed/store/store.h"

namespace colony::dist::gloo_detail {

// gloo::rendezvous::Store over a Colony Store. Every blocking call ends after the Colony store's
// timeout (gloo passes its context timeout, meant for collectives, which may be far longer than
// anyone should wait for a peer to show up at rendezvous). Errors are Colony's TimeoutError /
// StoreError, which name the missing keys.
class GlooStoreAdapter : public ::gloo::rendezvous::Store {
 public:
  explicit GlooStoreAdapter(std::shared_ptr<colony::dist::Store> store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  std::shared_ptr<colony::dist::Store> store_;
};

// Where gloo's TCP transport listens, and why (for logs and error messages).
struct TransportChoice {
  ::gloo::transport::tcp::attr attr;
  std::string description;  // e.g. "127.0.0.1 (MASTER_ADDR 127.0.0.1 is a loopback address)"
};

// In order of preference:
//  1. COLONY_SOCKET_IFNAME, else GLOO_SOCKET_IFNAME: that network interface (the first name of a
//     comma-separated list), for machines with several networks where only one reaches the peers.
//  2. MASTER_ADDR unset or a loopback address: 127.0.0.1. Every rank of such a job runs on this
//     machine (the others could not reach the store either), and loopback never leaves it.
//  3. Otherwise: the local address the kernel routes MASTER_ADDR's traffic from (a UDP connect(),
//     which sends nothing). The peers reached the store at MASTER_ADDR, so this interface is the
//     one most likely to reach them too — unlike the address of the hostname, which on many
//     machines resolves to 127.0.1.1 or a management network.
//  4. If that fails: this machine's hostname, resolved by gloo.
TransportChoice choose_transport();

// Ranks whose connection to this process has failed (gloo records the error on the pair and
// rethrows it on any later use, which is how this finds them). Only meaningful after an I/O
// error: it leaves a harmless zero-byte send notification on the healthy connections, which is
// acceptable because the group is unusable after such an error anyway.
std::vector<int> broken_peers(::gloo::Context& context);

// Gloo's TCP transport writes with writev(), which raises SIGPIPE when the peer's end is gone, and
// SIGPIPE's default action ends the process: a rank whose peer died mid-collective died of the
// signal (seen in CI: "rank 1 died of signal 13") instead of raising the CollectiveError that
// names the lost rank. Python, where PyTorch runs Gloo, ignores SIGPIPE from startup; a C++
// program does not. Sets SIGPIPE to ignored where its action is the default; a handler or mask
// the program set stays. (An ignored SIGPIPE survives exec, as under Python: a program a rank
// starts sees EPIPE rather than the signal.)
void ignore_sigpipe_if_default();

// Gloo's TCP transport (Debian's libgloo) creates its sockets and epoll descriptor without
// close-on-exec, so every program a rank started (a data-loading helper, a shell command) would
// hold the job's connections open. open_descriptors() lists this process's descriptors;
// close_on_exec_since() marks the sockets and epoll descriptors that were not in `before`.
std::vector<int> open_descriptors();
void close_on_exec_since(const std::vector<int>& before);

}  // namespace colony::dist::gloo_detail
