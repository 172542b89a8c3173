// What a user program reaches through colony.h alone: it compiles only with these in the umbrella.
#include "colony.h"

#include <gtest/gtest.h>

#include <memory>

namespace colony {
namespace {

TEST(Umbrella, SafetensorsTextAndSchedulesAreReachable) {
  Tensor w = raw::from_vector(std::vector<double>{1.5, -2}, {2}, kFloat64);
  io::SafetensorsContents back = io::decode_safetensors(io::encode_safetensors({{"w", w}}, {{"k", "v"}}), "memory");
  ASSERT_EQ(back.tensors.size(), 1u);
  EXPECT_TRUE(raw::equal(back.tensors[0].second, w));
  EXPECT_EQ(back.metadata.at("k"), "v");

  data::CharTokenizer tok = data::CharTokenizer::from_text("ab");
  data::TokenBlocks blocks(tok.encode_tensor("abab"), 2, data::TokenBlocksOptions().world_size(1).rank(0));
  EXPECT_EQ(blocks.next_batch(1).x.sizes(), (Shape{1, 2}));

  Tensor p = raw::zeros({1}, TensorOptions(kFloat64).requires_grad(true));
  optim::AdamW opt({p}, optim::AdamWOptions(1.0));
  optim::SequentialLR sched(opt, {std::make_shared<optim::LinearLR>(opt, 0.5, 1.0, 2),
                                  std::make_shared<optim::LambdaLR>(opt, [](int64_t) { return 0.25; })},
                            {2});
  sched.step();
  sched.step();
  EXPECT_DOUBLE_EQ(opt.lr(), 0.25);
}

}  // namespace
}  // namespace colony
