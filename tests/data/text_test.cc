// Character-level text: CharTokenizer (nanoGPT's shakespeare_char vocabulary), the 90/10 split,
// and TokenBlocks' random blocks, also sharded over ranks. Small texts made here; the fetched
// Shakespeare is never needed.
#include "data/text.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "data/token_blocks.h"
#include "ops/raw_ops.h"
#include "tests/data/data_test_util.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

using colony::testing::throws_with;

std::vector<int64_t> ints(const Tensor& t) {
  Tensor c = raw::contiguous(t);
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

Tensor arange(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return raw::from_vector(v, {n}, TensorOptions(kInt64));
}

TEST(CharTokenizer, VocabularyIsTheSortedDistinctCharactersAsNanoGPT) {
  // Python: chars = sorted(set("hello world\n")) -> ['\n', ' ', 'd', 'e', 'h', 'l', 'o', 'r', 'w']
  CharTokenizer tok = CharTokenizer::from_text("hello world\n");
  EXPECT_EQ(tok.vocab_size(), 9);
  EXPECT_EQ(tok.vocabulary(), "\n dehlorw");
  EXPECT_EQ(tok.encode("hello"), (std::vector<int64_t>{4, 3, 5, 5, 6}));
  EXPECT_EQ(tok.decode(std::vector<int64_t>{8, 6, 7, 5, 2, 0}), "world\n");
  EXPECT_EQ(ints(tok.encode_tensor("held")), (std::vector<int64_t>{4, 3, 5, 2}));
  EXPECT_EQ(tok.decode(tok.encode_tensor("old dew\n")), "old dew\n");
}

TEST(CharTokenizer, CharactersAreCodePointsNotBytes) {
  // "ï" and "é" are two bytes each in UTF-8 but one character each, sorted after ASCII by code point.
  const std::string text = "na\xC3\xAFve caf\xC3\xA9";
  CharTokenizer tok = CharTokenizer::from_text(text);
  EXPECT_EQ(tok.vocab_size(), 9);  // ' ' a c e f n v é ï
  EXPECT_EQ(tok.encode("\xC3\xA9\xC3\xAF"), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(tok.decode(tok.encode(text)), text);
  // Beyond the BMP too.
  CharTokenizer emoji = CharTokenizer::from_text("a\xF0\x9F\x98\x80");
  EXPECT_EQ(emoji.encode("\xF0\x9F\x98\x80" "a"), (std::vector<int64_t>{1, 0}));
}

TEST(CharTokenizer, BadInputIsRefusedClearly) {
  CharTokenizer tok = CharTokenizer::from_text("abc");
  EXPECT_TRUE(throws_with([&] { tok.encode("abz"); },
                          "character 'z' (U+007A) at byte 2 is not in the vocabulary of 3 characters"));
  EXPECT_TRUE(throws_with([&] { tok.decode(std::vector<int64_t>{0, 3}); },
                          "id 3 at position 1 is outside the vocabulary [0, 3)"));
  EXPECT_TRUE(throws_with([&] { tok.decode(std::vector<int64_t>{-1}); }, "id -1 at position 0"));
  EXPECT_TRUE(throws_with([&] { tok.decode(raw::zeros({2, 2}, TensorOptions(kInt64))); },
                          "expected a 1-D integral tensor of ids"));
  EXPECT_TRUE(throws_with([&] { CharTokenizer::from_text(""); }, "the text is empty"));
  EXPECT_TRUE(throws_with([&] { CharTokenizer::from_text("ab\xC3"); }, "not valid UTF-8 at byte 2 (byte 0xC3)"));
  EXPECT_TRUE(throws_with([&] { CharTokenizer::from_text("\xC0\xAF"); }, "not valid UTF-8 at byte 0"));  // overlong
  EXPECT_TRUE(throws_with([&] { CharTokenizer("ba"); }, "distinct characters in increasing order"));
  EXPECT_TRUE(throws_with([&] { CharTokenizer(""); }, "the vocabulary is empty"));
}

TEST(CharTokenizer, SaveAndLoadGiveTheSameIds) {
  auto dir = testing::scratch_dir("char_tokenizer");
  const std::string text = "To be, or not to be: that is the question.\n\xE2\x80\x94 Hamlet";
  CharTokenizer tok = CharTokenizer::from_text(text);
  tok.save((dir / "vocab.txt").string());
  CharTokenizer back = CharTokenizer::load((dir / "vocab.txt").string());
  EXPECT_EQ(back.vocab_size(), tok.vocab_size());
  EXPECT_EQ(back.encode(text), tok.encode(text));
  EXPECT_EQ(back.decode(tok.encode(text)), text);
  // From the string a checkpoint's extra map can hold.
  EXPECT_EQ(CharTokenizer(tok.vocabulary()).encode(text), tok.encode(text));

  std::ofstream(dir / "bad_magic.txt") << "vocab 1 3\nabc";
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { CharTokenizer::load((dir / "bad_magic.txt").string()); },
                                              "does not start with the line \"colony-char-vocab 1 <vocab_size>\""));
  std::ofstream(dir / "short.txt") << "colony-char-vocab 1 4\nabc";
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { CharTokenizer::load((dir / "short.txt").string()); },
                                              "announces 4 characters but holds 3"));
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { CharTokenizer::load((dir / "absent.txt").string()); },
                                              "cannot open"));
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { read_text("/nonexistent/data/shakespeare/input.txt"); },
                                              "python3 tools/fetch_text.py writes data/shakespeare/input.txt"));
}

TEST(SplitTokens, FirstNinetyPercentTrainTheRestValAsNanoGPT) {
  TokenSplit s = split_tokens(arange(25));  // int(25 * 0.9) = 22
  EXPECT_EQ(ints(s.train), ints(arange(22)));
  EXPECT_EQ(ints(s.val), (std::vector<int64_t>{22, 23, 24}));
  TokenSplit half = split_tokens(arange(10), 0.5);
  EXPECT_EQ(half.train.numel(), 5);
  EXPECT_TRUE(throws_with([&] { split_tokens(arange(1)); }, "1 tokens split at 0.9 leave train empty"));
  EXPECT_EQ(split_tokens(arange(5), 0.99).val.numel(), 1);  // int(4.95) = 4
  EXPECT_TRUE(throws_with([&] { split_tokens(arange(5), 1.0); }, "train_fraction must be in (0, 1)"));
  EXPECT_TRUE(throws_with([&] { split_tokens(raw::zeros({2, 3})); }, "expected a 1-D tensor of tokens"));
}

TEST(TokenBlocks, TargetsAreTheInputsShiftedByOneAndEveryOffsetIsReached) {
  const int64_t n = 20, block = 4;
  TokenBlocks blocks(arange(n), block, TokenBlocksOptions().world_size(1).rank(0).seed(7));
  std::set<int64_t> starts;
  for (int i = 0; i < 200; ++i) {
    TokenBatch b = blocks.next_batch(3);
    ASSERT_EQ(b.x.sizes(), (Shape{3, block}));
    ASSERT_EQ(b.y.sizes(), (Shape{3, block}));
    std::vector<int64_t> x = ints(b.x), y = ints(b.y);
    for (int64_t r = 0; r < 3; ++r) {
      for (int64_t t = 0; t < block; ++t) {
        ASSERT_EQ(x[r * block + t], x[r * block] + t);
        ASSERT_EQ(y[r * block + t], x[r * block + t] + 1);
      }
      starts.insert(x[r * block]);
    }
  }
  // nanoGPT's offsets: randint(len(data) - block_size), so 0 .. 15 here; the last block's target
  // ends on the last token.
  EXPECT_EQ(starts.size(), static_cast<size_t>(n - block));
  EXPECT_EQ(*starts.begin(), 0);
  EXPECT_EQ(*starts.rbegin(), n - block - 1);
  EXPECT_EQ(blocks.batches_drawn(), 200);
}

TEST(TokenBlocks, SeededStreamsAreReproducibleAndResumable) {
  auto stream = [](uint64_t seed, int64_t skip, int count) {
    TokenBlocks b(arange(1000), 8, TokenBlocksOptions().world_size(1).rank(0).seed(seed));
    b.set_batches_drawn(skip);
    std::vector<int64_t> out;
    for (int i = 0; i < count; ++i) {
      auto x = ints(b.next_batch(4).x);
      out.insert(out.end(), x.begin(), x.end());
    }
    return out;
  };
  EXPECT_EQ(stream(1, 0, 5), stream(1, 0, 5));
  EXPECT_NE(stream(1, 0, 5), stream(2, 0, 5));
  // Resuming after 3 batches continues the uninterrupted stream.
  std::vector<int64_t> whole = stream(1, 0, 5);
  std::vector<int64_t> rest = stream(1, 3, 2);
  EXPECT_EQ(rest, std::vector<int64_t>(whole.begin() + 3 * 4 * 8, whole.end()));
}

TEST(TokenBlocks, RanksDrawDifferentBlocksThatTogetherMakeTheSingleRankStream) {
  const int64_t world = 4, per_rank = 2;
  TokenBlocks single(arange(5000), 16, TokenBlocksOptions().world_size(1).rank(0).seed(3));
  std::vector<TokenBlocks> ranks;
  for (int64_t r = 0; r < world; ++r) {
    ranks.emplace_back(arange(5000), 16, TokenBlocksOptions().world_size(world).rank(r).seed(3));
  }
  for (int step = 0; step < 3; ++step) {
    std::vector<int64_t> together;
    std::set<std::vector<int64_t>> distinct;
    for (auto& r : ranks) {
      std::vector<int64_t> x = ints(r.next_batch(per_rank).x);
      distinct.insert(x);
      together.insert(together.end(), x.begin(), x.end());
    }
    EXPECT_EQ(distinct.size(), static_cast<size_t>(world)) << "step " << step;
    EXPECT_EQ(together, ints(single.next_batch(world * per_rank).x)) << "step " << step;
  }
}

TEST(TokenBlocks, RankAndWorldSizeComeFromTheEnvironmentByDefault) {
  setenv("WORLD_SIZE", "3", 1);
  setenv("RANK", "2", 1);
  TokenBlocks b(arange(100), 4, TokenBlocksOptions().seed(1));
  unsetenv("WORLD_SIZE");
  unsetenv("RANK");
  EXPECT_EQ(b.world_size(), 3);
  EXPECT_EQ(b.rank(), 2);
  TokenBlocks explicit_rank(arange(100), 4, TokenBlocksOptions().world_size(3).rank(2).seed(1));
  EXPECT_EQ(ints(b.next_batch(2).x), ints(explicit_rank.next_batch(2).x));
}

TEST(TokenBlocks, BadInputIsRefusedClearly) {
  auto opts = TokenBlocksOptions().world_size(1).rank(0);
  EXPECT_TRUE(throws_with([&] { TokenBlocks(arange(8), 8, opts); },
                          "8 tokens are too few for block_size 8: a block and its target (shifted by one) need at "
                          "least 9"));
  EXPECT_NO_THROW(TokenBlocks(arange(9), 8, opts).next_batch(2));
  EXPECT_TRUE(throws_with([&] { TokenBlocks(arange(9), 0, opts); }, "block_size must be >= 1, got 0"));
  EXPECT_TRUE(throws_with([&] { TokenBlocks(raw::zeros({9}), 4, opts); }, "expected a 1-D integral tensor of tokens"));
  EXPECT_TRUE(throws_with([&] { TokenBlocks(raw::zeros({3, 9}, TensorOptions(kInt64)), 4, opts); },
                          "got int64 with 2 dims"));
  EXPECT_TRUE(throws_with([&] { TokenBlocks(arange(9), 4, TokenBlocksOptions().world_size(2).rank(2)); },
                          "rank 2 is not in [0, 2)"));
  TokenBlocks ok(arange(9), 4, opts);
  EXPECT_TRUE(throws_with([&] { ok.next_batch(0); }, "batch_size must be >= 1, got 0"));
  EXPECT_TRUE(throws_with([&] { ok.set_batches_drawn(-1); }, "batches drawn must be >= 0"));
}

}  // namespace
}  // namespace colony::data
