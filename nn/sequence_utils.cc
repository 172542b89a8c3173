#include "nn/sequence_utils.h"

#include <algorithm>
#include <stdexcept>

#include "autograd/autograd.h"

namespace colony::nn::utils {

namespace rnn {

Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value,
                    const std::string& padding_side) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("pad_sequence: " + what); };
  if (sequences.empty()) fail("received an empty list of sequences");
  if (padding_side != "right" && padding_side != "left") {
    fail("padding_side must be \"left\" or \"right\", got \"" + padding_side + "\"");
  }
  const Tensor& first = sequences[0];
  if (first.dim() < 1) fail("sequence 0 is a 0-dim tensor; each sequence needs a length dim [L, *]");
  const Shape trailing(first.sizes().begin() + 1, first.sizes().end());
  int64_t max_len = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const Tensor& s = sequences[i];
    const Shape tail = s.dim() >= 1 ? Shape(s.sizes().begin() + 1, s.sizes().end()) : Shape{};
    if (s.dim() < 1 || tail != trailing) {
      std::string expected = "[L";
      for (int64_t d : trailing) expected += ", " + std::to_string(d);
      fail("sequence " + std::to_string(i) + " has shape " + shape_str(s.sizes()) + "; every sequence must be " +
           expected + "], as sequence 0");
    }
    if (s.dtype() != first.dtype() || s.device() != first.device()) {
      fail("sequence " + std::to_string(i) + " is " + dtype_name(s.dtype()) + " on " + s.device().str() +
           ", sequence 0 " + dtype_name(first.dtype()) + " on " + first.device().str() + "; they must match");
    }
    max_len = std::max(max_len, s.size(0));
  }
  std::vector<Tensor> padded;
  padded.reserve(sequences.size());
  for (const Tensor& s : sequences) {
    if (s.size(0) == max_len) {
      padded.push_back(s);
      continue;
    }
    Shape fill_shape = first.sizes();
    fill_shape[0] = max_len - s.size(0);
    Tensor fill = full(fill_shape, padding_value, TensorOptions(s.dtype()).device(s.device()));
    padded.push_back(padding_side == "right" ? cat({s, fill}, 0) : cat({fill, s}, 0));
  }
  return stack(padded, batch_first ? 0 : 1);
}

}  // namespace rnn

Tensor parameters_to_vector(const std::vector<Tensor>& parameters) {
  if (parameters.empty()) throw std::invalid_argument("parameters_to_vector: no parameters given");
  std::vector<Tensor> flat;
  flat.reserve(parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i].device() != parameters[0].device()) {
      throw std::invalid_argument("parameters_to_vector: parameter " + std::to_string(i) + " is on " +
                                  parameters[i].device().str() + ", parameter 0 on " + parameters[0].device().str() +
                                  "; all must be on one device");
    }
    flat.push_back(reshape(parameters[i], {-1}));
  }
  return cat(flat, 0);
}

void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters) {
  int64_t total = 0;
  for (const Tensor& p : parameters) total += p.numel();
  if (vec.dim() != 1 || vec.numel() != total) {
    throw std::invalid_argument("vector_to_parameters: expected a 1-D vector of " + std::to_string(total) +
                                " elements (the parameters' total size), got shape " + shape_str(vec.sizes()));
  }
  NoGradGuard no_grad;
  int64_t offset = 0;
  for (Tensor p : parameters) {
    p.copy_(reshape(narrow(vec, 0, offset, p.numel()), p.sizes()));
    offset += p.numel();
  }
}

}  // namespace colony::nn::utils
