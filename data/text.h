// Character-level text for language models, as nanoGPT's shakespeare_char (prepare.py):
//
//   std::string text = data::read_text("data/shakespeare/input.txt");  // python3 tools/fetch_text.py
//   data::CharTokenizer tok = data::CharTokenizer::from_text(text);    // 65 characters or so
//   data::TokenSplit split = data::split_tokens(tok.encode_tensor(text));  // first 90 % / last 10 %
//   data::TokenBlocks train(split.train, block_size, data::TokenBlocksOptions().seed(1337));
//   data::TokenBatch b = train.next_batch(12);  // b.x, b.y: int64 [12, block_size]
//   std::string sample = tok.decode(ids);
//
// Characters are Unicode code points of UTF-8 text, as Python's str (so the ids are those of
// nanoGPT's meta.pkl for the same text); the vocabulary is the sorted set of distinct characters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace colony::data {

// The whole file as bytes. A missing file's error names the path (and, for
// data/shakespeare/input.txt, the command that fetches it).
std::string read_text(const std::string& path);

class CharTokenizer {
 public:
  // The vocabulary of `text`: its distinct characters, sorted by code point. Throws on invalid
  // UTF-8 (naming the byte offset) and on empty text.
  static CharTokenizer from_text(const std::string& text);
  // The characters in id order, as UTF-8 (vocabulary() of another tokenizer): strictly increasing
  // code points, at least one.
  explicit CharTokenizer(const std::string& vocabulary);

  int64_t vocab_size() const { return static_cast<int64_t>(chars_.size()); }
  // The characters in id order, as UTF-8: what save() writes, and what the constructor takes (to
  // keep it in a checkpoint's TrainingState::extra, for example).
  std::string vocabulary() const;

  // One id per character; a character not in the vocabulary throws, naming it (as U+XXXX too) and
  // its byte offset.
  std::vector<int64_t> encode(const std::string& text) const;
  // The same as a 1-D int64 tensor on the CPU.
  Tensor encode_tensor(const std::string& text) const;
  // The text of `ids`; an id outside [0, vocab_size) throws, naming it and its position.
  std::string decode(const std::vector<int64_t>& ids) const;
  // The text of a 1-D integral tensor (on any device).
  std::string decode(const Tensor& ids) const;

  // A text file: the line "colony-char-vocab 1 <vocab_size>", then the characters in id order,
  // UTF-8, nothing between them. load() checks all of it and names the file in its errors.
  void save(const std::string& path) const;
  static CharTokenizer load(const std::string& path);

 private:
  CharTokenizer() = default;
  std::vector<char32_t> chars_;  // id -> code point, increasing
};

// nanoGPT's split: train = tokens[:int(n * train_fraction)], val = the rest (views, not copies).
struct TokenSplit {
  Tensor train;
  Tensor val;
};
// `tokens`: 1-D; train_fraction in (0, 1); train must not come out empty (val cannot).
TokenSplit split_tokens(const Tensor& tokens, double train_fraction = 0.9);

}  // namespace colony::data
