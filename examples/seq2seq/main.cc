// An encoder-decoder nn::Transformer that learns to reverse sequences of digits, written as a
// PyTorch user writes a translation model: token and position embeddings, padding masks for the
// source and the target, the causal mask on the target, teacher forcing with cross-entropy that
// ignores the padding, then greedy decoding one token at a time. A few seconds on a CPU.
//
//   ./bazelw run -c opt //examples/seq2seq [-- --steps 400 --threads 2]
//
// Prints the loss every 100 steps and, at the end, exact_match=X: the fraction of 256 new
// sequences the model reverses without a mistake.
#include <CLI/CLI.hpp>

#include <iostream>
#include <random>
#include <vector>

#include "colony.h"
using namespace colony;

namespace {

constexpr int64_t kPad = 0, kBos = 1, kEos = 2, kFirstDigit = 3, kVocab = kFirstDigit + 10;
constexpr int64_t kMinLen = 3, kMaxLen = 8;
constexpr int64_t kSrcLen = kMaxLen, kTgtLen = kMaxLen + 1;  // target rows: BOS/digits + EOS

// A batch: src [B, kSrcLen] digits then padding; tgt_in [B, kTgtLen] BOS then the reversed digits
// (the decoder's input); tgt_out [B, kTgtLen] the reversed digits then EOS (what it must predict),
// both padded.
struct Batch {
  Tensor src, tgt_in, tgt_out;
};

Batch make_batch(int64_t batch, std::mt19937& rng) {
  std::vector<int64_t> src(batch * kSrcLen, kPad), tgt_in(batch * kTgtLen, kPad), tgt_out(batch * kTgtLen, kPad);
  std::uniform_int_distribution<int64_t> len_dist(kMinLen, kMaxLen), digit(0, 9);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t n = len_dist(rng);
    std::vector<int64_t> d(n);
    for (auto& x : d) x = kFirstDigit + digit(rng);
    tgt_in[b * kTgtLen] = kBos;
    for (int64_t i = 0; i < n; ++i) {
      src[b * kSrcLen + i] = d[i];
      tgt_in[b * kTgtLen + 1 + i] = d[n - 1 - i];
      tgt_out[b * kTgtLen + i] = d[n - 1 - i];
    }
    tgt_out[b * kTgtLen + n] = kEos;
  }
  return {from_vector<int64_t>(src, {batch, kSrcLen}), from_vector<int64_t>(tgt_in, {batch, kTgtLen}),
          from_vector<int64_t>(tgt_out, {batch, kTgtLen})};
}

struct Seq2Seq : nn::Module {
  explicit Seq2Seq(int64_t d_model) {
    src_embed = register_module("src_embed", std::make_shared<nn::Embedding>(kVocab, d_model));
    tgt_embed = register_module("tgt_embed", std::make_shared<nn::Embedding>(kVocab, d_model));
    pos_embed = register_module("pos_embed", std::make_shared<nn::Embedding>(kTgtLen, d_model));
    transformer = register_module(
        "transformer", std::make_shared<nn::Transformer>(nn::TransformerOptions(d_model, /*nhead=*/4, 2, 2)
                                                             .dim_feedforward(4 * d_model)
                                                             .dropout(0.0)
                                                             .batch_first(true)));
    head = register_module("head", std::make_shared<nn::Linear>(d_model, kVocab));
  }

  Tensor embed(nn::Embedding& table, const Tensor& tokens) {
    Tensor pos = arange(static_cast<double>(tokens.size(1)), TensorOptions(kInt64));
    return table.forward(tokens) + pos_embed->forward(pos);
  }

  // Logits [B, T, kVocab] for the target prefix tgt_in given src; padded positions are masked.
  Tensor forward(const Tensor& src, const Tensor& tgt_in) {
    Tensor causal = nn::Transformer::generate_square_subsequent_mask(tgt_in.size(1));
    Tensor src_pad = eq(src, static_cast<double>(kPad));
    Tensor tgt_pad = eq(tgt_in, static_cast<double>(kPad));
    Tensor out = transformer->forward(embed(*src_embed, src), embed(*tgt_embed, tgt_in), /*src_mask=*/std::nullopt,
                                      causal, /*memory_mask=*/std::nullopt, src_pad, tgt_pad,
                                      /*memory_key_padding_mask=*/src_pad);
    return head->forward(out);
  }

  std::shared_ptr<nn::Embedding> src_embed, tgt_embed, pos_embed;
  std::shared_ptr<nn::Transformer> transformer;
  std::shared_ptr<nn::Linear> head;
};

// Greedy decoding: start from BOS, append the most likely token until EOS or kTgtLen tokens.
// Returns [B, kTgtLen] predictions (what tgt_out holds when every one is right).
Tensor greedy_decode(Seq2Seq& model, const Tensor& src) {
  NoGradGuard no_grad;
  const int64_t batch = src.size(0);
  Tensor tgt = full({batch, 1}, static_cast<double>(kBos), TensorOptions(kInt64));
  std::vector<Tensor> predicted;
  for (int64_t t = 0; t < kTgtLen; ++t) {
    Tensor logits = model.forward(src, tgt);
    Tensor next = logits.select(1, t).argmax(-1, /*keepdim=*/true);  // [B, 1]
    predicted.push_back(next);
    tgt = cat({tgt, next}, 1);
  }
  return cat(predicted, 1);
}

// Whole sequences right: every position up to and including EOS matches (after EOS, anything).
double exact_match(const Tensor& predicted, const Tensor& want) {
  const Tensor pc = predicted.contiguous(), wc = want.contiguous();
  const int64_t* p = pc.data_ptr<int64_t>();
  const int64_t* w = wc.data_ptr<int64_t>();
  const int64_t batch = predicted.size(0);
  int64_t right = 0;
  for (int64_t b = 0; b < batch; ++b) {
    bool ok = true;
    for (int64_t t = 0; t < kTgtLen && ok; ++t) {
      ok = p[b * kTgtLen + t] == w[b * kTgtLen + t];
      if (w[b * kTgtLen + t] == kEos) break;
    }
    right += ok;
  }
  return static_cast<double>(right) / batch;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 400, threads = 2;
  CLI::App app{"Train an nn::Transformer to reverse digit sequences, then decode new ones greedily"};
  app.add_option("--steps", steps, "training steps (batches of 64)")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  set_num_threads(threads);
  manual_seed(0);
  std::mt19937 rng(0);
  Seq2Seq model(/*d_model=*/64);
  optim::AdamW optimizer(model.parameters(), optim::AdamWOptions(1e-3).weight_decay(0.0));
  const auto ignore_pad = F::CrossEntropyFuncOptions().ignore_index(kPad);
  for (int step = 1; step <= steps; ++step) {
    Batch b = make_batch(64, rng);
    optimizer.zero_grad();
    Tensor logits = model.forward(b.src, b.tgt_in);
    Tensor loss = F::cross_entropy(logits.reshape({-1, kVocab}), b.tgt_out.reshape({-1}), ignore_pad);
    loss.backward();
    nn::utils::clip_grad_norm_(model.parameters(), /*max_norm=*/1.0);
    optimizer.step();
    if (step % 100 == 0 || step == steps) std::cout << "step " << step << " loss " << loss.item() << "\n";
  }
  model.eval();
  std::mt19937 held_out(12345);
  Batch test = make_batch(256, held_out);
  std::cout << "exact_match=" << exact_match(greedy_decode(model, test.src), test.tgt_out) << "\n";
}
