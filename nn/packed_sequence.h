// torch.nn.utils.rnn's packed sequences (libtorch's torch::nn::utils::rnn names and accessors): a
// batch of sequences of different lengths as the rows of its steps, longest first, which RNN,
// LSTM and GRU (nn/rnn.h, forward_with_packed_input) run each for its own length.
//
//   Tensor padded = ...;                                   // [T, B, *], sequence b valid for lengths[b] steps
//   auto packed = nn::utils::rnn::pack_padded_sequence(padded, lengths, /*batch_first=*/false,
//                                                      /*enforce_sorted=*/false);
//   auto [out, h_n] = gru->forward_with_packed_input(packed);
//   auto [out_padded, out_lengths] = nn::utils::rnn::pad_packed_sequence(out);
//
// data holds, step after step, the rows of the sequences still running at that step, in the
// sorted batch order (lengths decreasing); batch_sizes (int64, always on the CPU) the number of
// such rows per step. sorted_indices maps sorted positions to the original batch (and
// unsorted_indices back), or both are undefined when the batch came sorted (enforce_sorted).
// Packing and unpacking are one index_select each, so gradients flow through both.
//
// Differs from torch on purpose: a length larger than the padded input's time dim is refused
// (torch 2.15 returns batch_sizes that count more rows than its data holds); lengths may be given
// as a std::vector<int64_t> besides a tensor.
#pragma once

#include <optional>
#include <tuple>
#include <vector>

#include "tensor/tensor.h"

namespace colony::nn::utils::rnn {

// torch.nn.utils.rnn.invert_permutation: the permutation p^-1 with p^-1[p[i]] = i (undefined for
// undefined).
Tensor invert_permutation(const Tensor& permutation);

class PackedSequence {
 public:
  PackedSequence() = default;
  // unsorted_indices left undefined is computed from sorted_indices (libtorch's constructor).
  explicit PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = Tensor(),
                          Tensor unsorted_indices = Tensor());

  const Tensor& data() const { return data_; }
  const Tensor& batch_sizes() const { return batch_sizes_; }
  const Tensor& sorted_indices() const { return sorted_indices_; }
  const Tensor& unsorted_indices() const { return unsorted_indices_; }
  // batch_sizes as host integers.
  std::vector<int64_t> batch_size_values() const;

  // data moved (differentiably) and the indices with it; batch_sizes stays on the CPU, as torch's.
  PackedSequence to(Device device) const;
  PackedSequence to(DType dtype) const;
  bool is_cuda() const { return data_.is_cuda(); }

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

// input [T, B, *] (batch_first: [B, T, *]); lengths: B positive lengths, at most T, as a 1-D
// integer tensor on the CPU (torch converts the dtype to int64 too) or a vector. enforce_sorted:
// the lengths must be decreasing (sorted_indices stay undefined); otherwise the batch is sorted
// here (a stable sort, longest first).
PackedSequence pack_padded_sequence(const Tensor& input, const Tensor& lengths, bool batch_first = false,
                                    bool enforce_sorted = true);
PackedSequence pack_padded_sequence(const Tensor& input, const std::vector<int64_t>& lengths, bool batch_first = false,
                                    bool enforce_sorted = true);

// The inverse: (padded [T, B, *] (batch_first: [B, T, *]) in the original batch order with
// padding_value after each end, lengths: int64 on the CPU). T is total_length when given (at
// least the longest length), else the longest length.
std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);

// sequences [L_i, *] packed: pack_padded_sequence(pad_sequence(sequences), lengths).
PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted = true);

// The inverse of pack_sequence: the sequences [L_i, *] in the original order.
std::vector<Tensor> unpack_sequence(const PackedSequence& packed);

// The inverse of pad_sequence: padded [T, B, *] (batch_first: [B, T, *]) cut to each of the B
// lengths (1-D integer tensor or vector, each at most T).
std::vector<Tensor> unpad_sequence(const Tensor& padded_sequences, const Tensor& lengths, bool batch_first = false);
std::vector<Tensor> unpad_sequence(const Tensor& padded_sequences, const std::vector<int64_t>& lengths,
                                   bool batch_first = false);

}  // namespace colony::nn::utils::rnn
