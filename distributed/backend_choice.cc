#include "distributed/backend_choice.h"

#include <map>
#include <stdexcept>

namespace colony::dist::init_detail {

int local_gpu(int local_rank, int gpus) { return gpus > 0 ? local_rank % gpus : -1; }

std::string encode(const BackendOffer& offer) {
  return offer.requested + "\n" + (offer.gpu.empty() ? "!" + offer.missing : offer.gpu);
}

BackendOffer decode_offer(const std::string& text) {
  BackendOffer o;
  const size_t newline = text.find('\n');
  o.requested = text.substr(0, newline);
  const std::string rest = newline == std::string::npos ? "" : text.substr(newline + 1);
  if (!rest.empty() && rest[0] == '!') {
    o.missing = rest.substr(1);
  } else {
    o.gpu = rest;
  }
  return o;
}

namespace {

// Why NCCL cannot run over these ranks; empty when it can.
std::string why_not_nccl(const std::vector<BackendOffer>& offers) {
  for (size_t r = 0; r < offers.size(); ++r)
    if (offers[r].gpu.empty()) return "rank " + std::to_string(r) + " has no GPU (" + offers[r].missing + ")";
  std::map<std::string, size_t> first_rank_of;
  for (size_t r = 0; r < offers.size(); ++r) {
    const auto [it, fresh] = first_rank_of.emplace(offers[r].gpu, r);
    if (!fresh)
      return "ranks " + std::to_string(it->second) + " and " + std::to_string(r) + " share the GPU " + offers[r].gpu;
  }
  return "";
}

}  // namespace

BackendChoice choose_backend(const std::vector<BackendOffer>& offers) {
  if (offers.empty()) throw std::invalid_argument("init_process_group: no rank offered a backend");
  const std::string& requested = offers[0].requested;
  for (size_t r = 1; r < offers.size(); ++r)
    if (offers[r].requested != requested)
      throw std::invalid_argument("init_process_group: rank " + std::to_string(r) + " asked for backend \"" +
                                  offers[r].requested + "\" but rank 0 for \"" + requested +
                                  "\"; every rank must ask for the same backend");
  if (requested == "gloo") return {"gloo", ""};
  const std::string why = why_not_nccl(offers);
  if (why.empty()) return {"nccl", ""};
  if (requested == "nccl")
    throw std::invalid_argument("init_process_group: backend \"nccl\" needs a GPU of its own for every rank, but " +
                                why + "; use backend \"gloo\" (or \"auto\"), which lets ranks share a GPU");
  return {"gloo", why};
}

}  // namespace colony::dist::init_detail
