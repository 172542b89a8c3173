#include "nn/packed_sequence.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "autograd/autograd.h"
#include "nn/sequence_utils.h"

namespace colony::nn::utils::rnn {
namespace {

[[noreturn]] void fail(const char* op, const std::string& what) {
  throw std::invalid_argument(std::string(op) + ": " + what);
}

// A 1-D integer tensor's values on the host.
std::vector<int64_t> host_values(const Tensor& t) {
  const Tensor host = raw::contiguous(raw::to(t, kCPU, kInt64));
  const int64_t* p = host.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + host.numel());
}

Tensor index_tensor(const std::vector<int64_t>& index, Device device) {
  return raw::from_vector<int64_t>(index, {static_cast<int64_t>(index.size())}, TensorOptions(kInt64).device(device));
}

// torch's checkLongTensor of _pack_padded_sequence, with its wording; the dtype is converted, as
// torch's lengths.to(torch.int64) does.
std::vector<int64_t> lengths_of(const char* op, const Tensor& lengths) {
  if (!lengths.defined() || lengths.dim() != 1 || !lengths.is_cpu()) {
    fail(op, "'lengths' argument should be a 1D CPU int64 tensor, but got " +
                 (lengths.defined() ? std::to_string(lengths.dim()) + "D " + lengths.device().str() + " " +
                                          dtype_name(lengths.dtype()) + " tensor"
                                    : std::string("an undefined tensor")));
  }
  return host_values(lengths);
}

Shape trailing_dims(const Tensor& t, int64_t from) { return Shape(t.sizes().begin() + from, t.sizes().end()); }

// Each sorted sequence's length, from the steps' batch sizes.
std::vector<int64_t> lengths_from(const std::vector<int64_t>& batch_sizes) {
  std::vector<int64_t> lengths(batch_sizes.empty() ? 0 : batch_sizes[0], 0);
  for (int64_t bs : batch_sizes) {
    for (int64_t s = 0; s < bs; ++s) ++lengths[s];
  }
  return lengths;
}

}  // namespace

Tensor invert_permutation(const Tensor& permutation) {
  if (!permutation.defined()) return Tensor();
  const std::vector<int64_t> p = host_values(permutation);
  std::vector<int64_t> inverse(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] < 0 || p[i] >= static_cast<int64_t>(p.size())) {
      fail("invert_permutation",
           "index " + std::to_string(p[i]) + " is out of range for a permutation of " + std::to_string(p.size()));
    }
    inverse[p[i]] = static_cast<int64_t>(i);
  }
  return index_tensor(inverse, permutation.device());
}

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices, Tensor unsorted_indices)
    : data_(std::move(data)),
      batch_sizes_(std::move(batch_sizes)),
      sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  if (!unsorted_indices_.defined()) unsorted_indices_ = invert_permutation(sorted_indices_);
}

std::vector<int64_t> PackedSequence::batch_size_values() const {
  return batch_sizes_.defined() ? host_values(batch_sizes_) : std::vector<int64_t>();
}

PackedSequence PackedSequence::to(Device device) const {
  auto move = [&](const Tensor& t) { return t.defined() ? raw::to(t, device, t.dtype()) : t; };
  return PackedSequence(colony::to(data_, device, data_.dtype()), batch_sizes_, move(sorted_indices_),
                        move(unsorted_indices_));
}

PackedSequence PackedSequence::to(DType dtype) const {
  return PackedSequence(colony::to(data_, data_.device(), dtype), batch_sizes_, sorted_indices_, unsorted_indices_);
}

PackedSequence pack_padded_sequence(const Tensor& input, const Tensor& lengths, bool batch_first, bool enforce_sorted) {
  return pack_padded_sequence(input, lengths_of("pack_padded_sequence", lengths), batch_first, enforce_sorted);
}

PackedSequence pack_padded_sequence(const Tensor& input, const std::vector<int64_t>& lengths, bool batch_first,
                                    bool enforce_sorted) {
  const char* op = "pack_padded_sequence";
  if (!input.defined()) fail(op, "input must be defined");
  if (input.numel() == 0) fail(op, "Cannot pack empty tensors.");
  if (input.dim() < 2) {
    fail(op, "input must be [T, B, *] (batch_first: [B, T, *]), got " + shape_str(input.sizes()));
  }
  const int64_t B = input.size(batch_first ? 0 : 1), T = input.size(batch_first ? 1 : 0);
  if (static_cast<int64_t>(lengths.size()) != B) {
    fail(op, "Expected `len(lengths)` to be equal to batch_size, but got " + std::to_string(lengths.size()) +
                 " (batch_size=" + std::to_string(B) + ")");
  }
  for (int64_t len : lengths) {
    if (len <= 0) {
      fail(op, "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0");
    }
    if (len > T) {
      fail(op, "a length of " + std::to_string(len) + " is more than the input's " + std::to_string(T) + " time steps");
    }
  }
  // order[s]: the batch entry at sorted position s.
  std::vector<int64_t> order(B);
  std::iota(order.begin(), order.end(), 0);
  if (enforce_sorted) {
    for (int64_t b = 0; b + 1 < B; ++b) {
      if (lengths[b + 1] > lengths[b]) {
        fail(op,
             "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
             "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
             "if you do not need ONNX exportability.");
      }
    }
  } else {
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return lengths[a] > lengths[b]; });
  }
  const int64_t steps = lengths[order[0]];
  std::vector<int64_t> batch_sizes(steps, 0), rows;
  for (int64_t t = 0; t < steps; ++t) {
    for (int64_t s = 0; s < B && lengths[order[s]] > t; ++s) {
      rows.push_back(batch_first ? order[s] * T + t : t * B + order[s]);
      ++batch_sizes[t];
    }
  }
  // One gather from the input's rows (its backward is one index_add).
  Shape flat = trailing_dims(input, 2);
  flat.insert(flat.begin(), T * B);
  Tensor data = index_select(reshape(input, flat), 0, index_tensor(rows, input.device()));
  Tensor sizes = raw::from_vector<int64_t>(batch_sizes, {steps});
  if (enforce_sorted) return PackedSequence(data, sizes);
  return PackedSequence(data, sizes, index_tensor(order, input.device()));
}

std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence, bool batch_first, double padding_value,
                                               std::optional<int64_t> total_length) {
  const char* op = "pad_packed_sequence";
  const Tensor& data = sequence.data();
  if (!data.defined() || !sequence.batch_sizes().defined()) fail(op, "the PackedSequence is empty");
  if (data.dim() < 1) fail(op, "data must be [rows, *], got a 0-dim tensor");
  const std::vector<int64_t> batch_sizes = sequence.batch_size_values();
  const int64_t rows = std::accumulate(batch_sizes.begin(), batch_sizes.end(), int64_t{0});
  if (batch_sizes.empty() || rows != data.size(0)) {
    fail(op, "batch_sizes add up to " + std::to_string(rows) + " rows but data has " + std::to_string(data.size(0)));
  }
  const int64_t max_len = static_cast<int64_t>(batch_sizes.size()), B = batch_sizes[0];
  int64_t T = max_len;
  if (total_length) {
    if (*total_length < max_len) {
      throw std::invalid_argument(std::string(op) +
                                  ": Expected total_length to be at least the length of the longest sequence in "
                                  "input, but got total_length=" +
                                  std::to_string(*total_length) + " and max sequence length being " +
                                  std::to_string(max_len));
    }
    T = *total_length;
  }
  const std::vector<int64_t> sorted_lengths = lengths_from(batch_sizes);
  std::vector<int64_t> offset(max_len, 0);
  for (int64_t t = 1; t < max_len; ++t) offset[t] = offset[t - 1] + batch_sizes[t - 1];
  const std::vector<int64_t> unsorted =
      sequence.unsorted_indices().defined() ? host_values(sequence.unsorted_indices()) : std::vector<int64_t>();
  auto sorted_pos = [&](int64_t j) { return unsorted.empty() ? j : unsorted[j]; };
  // Every output element gathers a row of data, or the padding row appended after them.
  std::vector<int64_t> index(T * B);
  std::vector<int64_t> lengths(B);
  for (int64_t j = 0; j < B; ++j) {
    const int64_t s = sorted_pos(j);
    lengths[j] = sorted_lengths[s];
    for (int64_t t = 0; t < T; ++t) {
      index[batch_first ? j * T + t : t * B + j] = t < sorted_lengths[s] ? offset[t] + s : rows;
    }
  }
  const Shape rest = trailing_dims(data, 1);
  Shape pad_shape = rest, out_shape = rest;
  pad_shape.insert(pad_shape.begin(), 1);
  out_shape.insert(out_shape.begin(), {batch_first ? B : T, batch_first ? T : B});
  Tensor padding = full(pad_shape, padding_value, TensorOptions(data.dtype()).device(data.device()));
  Tensor padded = reshape(index_select(cat({data, padding}, 0), 0, index_tensor(index, data.device())), out_shape);
  return {padded, raw::from_vector<int64_t>(lengths, {B})};
}

PackedSequence pack_sequence(const std::vector<Tensor>& sequences, bool enforce_sorted) {
  if (sequences.empty()) fail("pack_sequence", "received an empty list of sequences");
  std::vector<int64_t> lengths;
  for (const Tensor& s : sequences) lengths.push_back(s.dim() >= 1 ? s.size(0) : 0);
  return pack_padded_sequence(pad_sequence(sequences), lengths, false, enforce_sorted);
}

std::vector<Tensor> unpack_sequence(const PackedSequence& packed) {
  auto [padded, lengths] = pad_packed_sequence(packed, /*batch_first=*/true);
  return unpad_sequence(padded, lengths, /*batch_first=*/true);
}

std::vector<Tensor> unpad_sequence(const Tensor& padded_sequences, const Tensor& lengths, bool batch_first) {
  return unpad_sequence(padded_sequences, lengths_of("unpad_sequence", lengths), batch_first);
}

std::vector<Tensor> unpad_sequence(const Tensor& padded_sequences, const std::vector<int64_t>& lengths,
                                   bool batch_first) {
  const char* op = "unpad_sequence";
  if (!padded_sequences.defined() || padded_sequences.dim() < 2) {
    fail(op, "padded_sequences must be [T, B, *] (batch_first: [B, T, *]), got " +
                 (padded_sequences.defined() ? shape_str(padded_sequences.sizes()) : std::string("undefined")));
  }
  const int64_t B = padded_sequences.size(batch_first ? 0 : 1), T = padded_sequences.size(batch_first ? 1 : 0);
  if (static_cast<int64_t>(lengths.size()) != B) {
    fail(op, "got " + std::to_string(lengths.size()) + " lengths for a batch of " + std::to_string(B));
  }
  std::vector<Tensor> out;
  out.reserve(B);
  for (int64_t b = 0; b < B; ++b) {
    if (lengths[b] < 0 || lengths[b] > T) {
      fail(op, "length " + std::to_string(lengths[b]) + " of sequence " + std::to_string(b) + " is outside [0, " +
                   std::to_string(T) + "]");
    }
    out.push_back(narrow(select(padded_sequences, batch_first ? 0 : 1, b), 0, 0, lengths[b]));
  }
  return out;
}

}  // namespace colony::nn::utils::rnn
