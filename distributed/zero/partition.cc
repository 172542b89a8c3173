#include "distributed/zero/partition.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace colony::dist::zero_detail {

std::vector<std::vector<int>> assign_by_size(const std::vector<std::vector<int64_t>>& group_numels, int world) {
  if (world < 1) throw std::invalid_argument("ZeRO partition: world size " + std::to_string(world) + " < 1");
  std::vector<int64_t> load(static_cast<size_t>(world), 0);
  std::vector<std::vector<int>> owner;
  for (const auto& numels : group_numels) {
    std::vector<size_t> order(numels.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return numels[a] > numels[b]; });
    std::vector<int> of(numels.size(), 0);
    for (size_t i : order) {
      const int r = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      of[i] = r;
      load[static_cast<size_t>(r)] += numels[i];
    }
    owner.push_back(std::move(of));
  }
  return owner;
}

std::vector<Piece> pieces_by_parameter(const std::vector<std::vector<int64_t>>& group_numels, int world) {
  const auto owners = assign_by_size(group_numels, world);
  std::vector<int64_t> filled(static_cast<size_t>(world), 0);
  std::vector<Piece> pieces;
  size_t index = 0;
  for (size_t g = 0; g < group_numels.size(); ++g)
    for (size_t i = 0; i < group_numels[g].size(); ++i, ++index) {
      const int r = owners[g][i];
      pieces.push_back(Piece{index, 0, group_numels[g][i], r, filled[static_cast<size_t>(r)]});
      filled[static_cast<size_t>(r)] += group_numels[g][i];
    }
  return pieces;
}

std::vector<Piece> pieces_by_element(const std::vector<std::vector<int64_t>>& group_numels, int world) {
  if (world < 1) throw std::invalid_argument("ZeRO partition: world size " + std::to_string(world) + " < 1");
  int64_t total = 0;
  for (const auto& numels : group_numels) total = std::accumulate(numels.begin(), numels.end(), total);
  const int64_t shard = (total + world - 1) / world;
  std::vector<Piece> pieces;
  int64_t at = 0;  // the parameter's first element in the flat space
  size_t index = 0;
  for (const auto& numels : group_numels)
    for (const int64_t n : numels) {
      for (int64_t start = 0; start < n;) {
        const int r = static_cast<int>((at + start) / shard);
        const int64_t length = std::min(n - start, (r + 1) * shard - (at + start));
        pieces.push_back(Piece{index, start, length, r, at + start - r * shard});
        start += length;
      }
      at += n;
      ++index;
    }
  return pieces;
}

int64_t bucket_block(int64_t numel, int world) { return (numel + world - 1) / world; }

std::vector<Piece> pieces_by_bucket(const std::vector<std::vector<std::pair<size_t, int64_t>>>& buckets, int world) {
  if (world < 1) throw std::invalid_argument("ZeRO partition: world size " + std::to_string(world) + " < 1");
  std::vector<Piece> pieces;
  int64_t before = 0;  // every rank's shard elements in the buckets before this one
  for (const auto& bucket : buckets) {
    int64_t numel = 0;
    for (const auto& [param, n] : bucket) numel += n;
    const int64_t block = bucket_block(numel, world);
    int64_t at = 0;  // the parameter's first element in the bucket
    for (const auto& [param, n] : bucket) {
      for (int64_t start = 0; start < n;) {
        const int r = static_cast<int>((at + start) / block);
        const int64_t length = std::min(n - start, (r + 1) * block - (at + start));
        pieces.push_back(Piece{param, start, length, r, before + (at + start - r * block)});
        start += length;
      }
      at += n;
    }
    before += block;
  }
  return pieces;
}

int64_t largest_shard(const std::vector<Piece>& pieces, int world) {
  std::vector<int64_t> size(static_cast<size_t>(world), 0);
  for (const Piece& p : pieces) {
    int64_t& s = size[static_cast<size_t>(p.owner)];
    s = std::max(s, p.offset + p.length);
  }
  return size.empty() ? 0 : *std::max_element(size.begin(), size.end());
}

}  // namespace colony::dist::zero_detail
