// The closed forms of tests/nn/rnn_golden.py (which rnn_packed_golden.py imports) and the check of
// a recurrent module's outputs and gradients against torch's, shared by rnn_test.cc and
// rnn_packed_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/autograd.h"
#include "nn/module.h"
#include "tests/test_util.h"

namespace colony::testing::rnn_golden {

// shape filled with scale * cos(a * i + b), element i in row-major order.
inline Tensor closed(const Shape& shape, double a, double b, double scale = 1.0) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * std::cos(a * static_cast<double>(i) + b);
  return raw::from_vector(v, shape);
}

// The input: sin(0.1 i + 0.3), requiring grad.
inline Tensor seq(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(0.1 * static_cast<double>(i) + 0.3);
  Tensor t = raw::from_vector(v, shape);
  t.requires_grad_(true);
  return t;
}

// An initial state: 0.2 cos(0.29 i + k), requiring grad.
inline Tensor state(const Shape& shape, int k) {
  Tensor t = closed(shape, 0.29, k, 0.2);
  t.requires_grad_(true);
  return t;
}

// Every entry p of m's state dict, element i: 0.3 cos(0.37 i + p), loaded as a torch state dict.
inline void fill(nn::Module& m) {
  m.to(kFloat64);
  nn::NamedTensors sd;
  int p = 0;
  for (const auto& [name, t] : m.state_dict()) sd.emplace_back(name, closed(t.sizes(), 0.37, p++, 0.3));
  m.load_state_dict(sd);
}

// sum over j of <outs[j], cos(0.23 i + j)>.
inline Tensor loss_of(const std::vector<Tensor>& outs) {
  Tensor loss;
  for (size_t j = 0; j < outs.size(); ++j) {
    Tensor term = sum(mul(outs[j], closed(outs[j].sizes(), 0.23, static_cast<double>(j))));
    loss = loss.defined() ? add(loss, term) : term;
  }
  return loss;
}

inline Tensor vec(const std::vector<double>& v) { return raw::from_vector(v, {static_cast<int64_t>(v.size())}); }

// Outputs, then (after loss_of(outs).backward()) the gradients of the given inputs and of every
// parameter, against the golden lists; and the state dict's keys.
inline void expect_golden(nn::Module& m, const std::vector<Tensor>& outs,
                          const std::vector<std::vector<double>>& golden_outs, const std::vector<Tensor>& inputs,
                          const std::vector<std::vector<double>>& golden_grads,
                          const std::vector<double>& golden_param_grads, const std::vector<std::string>& keys) {
  const double rtol = 1e-9, atol = 1e-11;
  ASSERT_EQ(outs.size(), golden_outs.size());
  for (size_t j = 0; j < outs.size(); ++j) {
    EXPECT_TRUE(all_close(outs[j].reshape({-1}), vec(golden_outs[j]), rtol, atol)) << "output " << j;
  }
  loss_of(outs).backward();
  ASSERT_EQ(inputs.size(), golden_grads.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    ASSERT_TRUE(inputs[k].grad().defined()) << "input " << k;
    EXPECT_TRUE(all_close(inputs[k].grad().reshape({-1}), vec(golden_grads[k]), rtol, atol))
        << "gradient of input " << k;
  }
  std::vector<Tensor> grads;
  for (const auto& [name, p] : m.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    grads.push_back(p.grad().reshape({-1}));
  }
  EXPECT_TRUE(all_close(cat(grads, 0), vec(golden_param_grads), rtol, atol)) << "parameter gradients";
  std::vector<std::string> names;
  for (const auto& [name, t] : m.state_dict()) names.push_back(name);
  EXPECT_EQ(names, keys);
}

// The final state flattened onto parts (for a module that returns one vector, as the CUDA
// comparisons need): GRU's and RNN's h_n, or LSTM's h_n then c_n.
inline void append_flat_state(std::vector<Tensor>& parts, const Tensor& h_n) { parts.push_back(h_n.reshape({-1})); }
inline void append_flat_state(std::vector<Tensor>& parts, const std::tuple<Tensor, Tensor>& h_c) {
  parts.push_back(std::get<0>(h_c).reshape({-1}));
  parts.push_back(std::get<1>(h_c).reshape({-1}));
}

}  // namespace colony::testing::rnn_golden
