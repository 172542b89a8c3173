#include "data/text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "ops/raw_ops.h"

namespace colony::data {
namespace {

std::string hex_code(char32_t c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(c));
  return buf;
}

// The code point starting at text[*pos], advancing *pos past it; throws on invalid UTF-8
// (truncated, overlong, surrogate or beyond U+10FFFF), naming `who` and the byte offset.
char32_t next_code_point(const std::string& text, size_t* pos, const std::string& who) {
  const size_t start = *pos;
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char b0 = byte(start);
  int extra;
  char32_t c;
  if (b0 < 0x80) {
    extra = 0;
    c = b0;
  } else if ((b0 & 0xE0) == 0xC0) {
    extra = 1;
    c = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    extra = 2;
    c = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    extra = 3;
    c = b0 & 0x07;
  } else {
    extra = -1;
    c = 0;
  }
  bool ok = extra >= 0 && start + extra < text.size();
  for (int k = 1; ok && k <= extra; ++k) {
    ok = (byte(start + k) & 0xC0) == 0x80;
    c = (c << 6) | (byte(start + k) & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  if (!ok || c < kMin[extra] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
    throw std::invalid_argument(who + ": the text is not valid UTF-8 at byte " + std::to_string(start) +
                                " (byte 0x" + [&] {
                                  char buf[4];
                                  std::snprintf(buf, sizeof buf, "%02X", b0);
                                  return std::string(buf);
                                }() + "); character-level text must be UTF-8 (ASCII is)");
  }
  *pos = start + extra + 1;
  return c;
}

void append_utf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// A character as it reads in an error: itself when printable ASCII, else its code.
std::string show(char32_t c) {
  if (c >= 0x20 && c < 0x7F) return "'" + std::string(1, static_cast<char>(c)) + "' (" + hex_code(c) + ")";
  std::string s;
  append_utf8(c, &s);
  return (c < 0x20 || c == 0x7F ? std::string() : "'" + s + "' ") + hex_code(c);
}

constexpr const char* kVocabMagic = "colony-char-vocab";

}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::string hint = path.find("shakespeare") != std::string::npos
                           ? "; python3 tools/fetch_text.py writes data/shakespeare/input.txt"
                           : "";
    throw std::runtime_error("read_text: cannot open " + path + ": " + std::strerror(errno) + hint);
  }
  std::ostringstream s;
  s << f.rdbuf();
  if (f.bad()) throw std::runtime_error("read_text: error while reading " + path);
  return s.str();
}

CharTokenizer CharTokenizer::from_text(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("CharTokenizer::from_text: the text is empty; it has no characters");
  // ASCII (most text) through a table, the rest through a sort.
  bool ascii[128] = {};
  std::vector<char32_t> other;
  for (size_t pos = 0; pos < text.size();) {
    const char32_t c = next_code_point(text, &pos, "CharTokenizer::from_text");
    if (c < 128) {
      ascii[c] = true;
    } else {
      other.push_back(c);
    }
  }
  CharTokenizer tok;
  for (char32_t c = 0; c < 128; ++c)
    if (ascii[c]) tok.chars_.push_back(c);
  std::sort(other.begin(), other.end());
  other.erase(std::unique(other.begin(), other.end()), other.end());
  tok.chars_.insert(tok.chars_.end(), other.begin(), other.end());
  return tok;
}

CharTokenizer::CharTokenizer(const std::string& vocabulary) {
  for (size_t pos = 0; pos < vocabulary.size();) {
    const char32_t c = next_code_point(vocabulary, &pos, "CharTokenizer");
    if (!chars_.empty() && c <= chars_.back()) {
      throw std::invalid_argument("CharTokenizer: the vocabulary must list distinct characters in increasing order; " +
                                  show(c) + " (id " + std::to_string(chars_.size()) + ") follows " +
                                  show(chars_.back()));
    }
    chars_.push_back(c);
  }
  if (chars_.empty()) throw std::invalid_argument("CharTokenizer: the vocabulary is empty");
}

std::string CharTokenizer::vocabulary() const {
  std::string out;
  for (char32_t c : chars_) append_utf8(c, &out);
  return out;
}

std::vector<int64_t> CharTokenizer::encode(const std::string& text) const {
  // chars_ is sorted: ASCII ids through a table, the rest by binary search.
  int64_t ascii_id[128];
  std::fill(std::begin(ascii_id), std::end(ascii_id), -1);
  for (size_t i = 0; i < chars_.size() && chars_[i] < 128; ++i) ascii_id[chars_[i]] = static_cast<int64_t>(i);
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const char32_t c = next_code_point(text, &pos, "CharTokenizer::encode");
    int64_t id = -1;
    if (c < 128) {
      id = ascii_id[c];
    } else {
      auto it = std::lower_bound(chars_.begin(), chars_.end(), c);
      if (it != chars_.end() && *it == c) id = it - chars_.begin();
    }
    if (id < 0) {
      throw std::invalid_argument("CharTokenizer::encode: character " + show(c) + " at byte " +
                                  std::to_string(start) + " is not in the vocabulary of " +
                                  std::to_string(chars_.size()) + " characters (built from another text?)");
    }
    ids.push_back(id);
  }
  return ids;
}

Tensor CharTokenizer::encode_tensor(const std::string& text) const {
  std::vector<int64_t> ids = encode(text);
  const int64_t n = static_cast<int64_t>(ids.size());
  return raw::from_vector(ids, {n}, TensorOptions(kInt64));
}

std::string CharTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size()) {
      throw std::invalid_argument("CharTokenizer::decode: id " + std::to_string(ids[i]) + " at position " +
                                  std::to_string(i) + " is outside the vocabulary [0, " +
                                  std::to_string(vocab_size()) + ")");
    }
    append_utf8(chars_[ids[i]], &out);
  }
  return out;
}

std::string CharTokenizer::decode(const Tensor& ids) const {
  if (!ids.defined() || ids.dim() != 1 || is_floating(ids.dtype()) || ids.dtype() == kBool) {
    throw std::invalid_argument(
        "CharTokenizer::decode: expected a 1-D integral tensor of ids, got " +
        (ids.defined() ? std::string(dtype_name(ids.dtype())) + " with " + std::to_string(ids.dim()) + " dims"
                       : std::string("an undefined tensor")));
  }
  Tensor cpu = raw::contiguous(raw::to(ids, kCPU, kInt64));
  const int64_t* p = cpu.data_ptr<int64_t>();
  return decode(std::vector<int64_t>(p, p + cpu.numel()));
}

void CharTokenizer::save(const std::string& path) const {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("CharTokenizer::save: cannot write " + path + ": " + std::strerror(errno));
  f << kVocabMagic << " 1 " << chars_.size() << "\n" << vocabulary();
  f.close();
  if (!f) throw std::runtime_error("CharTokenizer::save: error while writing " + path);
}

CharTokenizer CharTokenizer::load(const std::string& path) {
  std::string content;
  try {
    content = read_text(path);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("CharTokenizer::load: ") + e.what());
  }
  const size_t eol = content.find('\n');
  std::istringstream header(content.substr(0, eol));
  std::string magic;
  int version = 0;
  long long count = -1;
  header >> magic >> version >> count;
  if (eol == std::string::npos || magic != kVocabMagic || version != 1 || count <= 0 || !header.eof()) {
    throw std::runtime_error("CharTokenizer::load: " + path + " does not start with the line \"" + kVocabMagic +
                             " 1 <vocab_size>\"; is it a vocabulary written by CharTokenizer::save?");
  }
  CharTokenizer tok;
  try {
    tok = CharTokenizer(content.substr(eol + 1));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("CharTokenizer::load: " + path + ": " + e.what());
  }
  if (tok.vocab_size() != count) {
    throw std::runtime_error("CharTokenizer::load: " + path + " announces " + std::to_string(count) +
                             " characters but holds " + std::to_string(tok.vocab_size()) + " (truncated?)");
  }
  return tok;
}

TokenSplit split_tokens(const Tensor& tokens, double train_fraction) {
  if (!tokens.defined() || tokens.dim() != 1) {
    throw std::invalid_argument("split_tokens: expected a 1-D tensor of tokens, got " +
                                (tokens.defined() ? std::to_string(tokens.dim()) + " dims" : std::string("none")));
  }
  if (!(train_fraction > 0 && train_fraction < 1)) {
    throw std::invalid_argument("split_tokens: train_fraction must be in (0, 1), got " + std::to_string(train_fraction));
  }
  const int64_t n = tokens.size(0);
  // int(n * 0.9) in Python: the product in double, truncated.
  const auto n_train = static_cast<int64_t>(static_cast<double>(n) * train_fraction);
  // val is never empty: n * train_fraction < n truncates to at most n - 1.
  if (n_train == 0) {
    char fraction[32];
    std::snprintf(fraction, sizeof fraction, "%g", train_fraction);
    throw std::invalid_argument("split_tokens: " + std::to_string(n) + " tokens split at " + fraction +
                                " leave train empty");
  }
  return {raw::narrow(tokens, 0, 0, n_train), raw::narrow(tokens, 0, n_train, n - n_train)};
}

}  // namespace colony::data
