// torch's string paddings ("same", "valid") and padding modes of the convolutions, for F::conv1d /
// F::conv2d (nn/functional_conv.cc) and the Conv1d / Conv2d modules (nn/conv.cc): one place for
// the split of "same" padding, the checks and torch's messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/functional.h"

namespace colony::nn::detail {

// Per spatial dim (in order): the padding the convolution itself takes on both sides, and the
// extra zeros F::pad adds on the right first. "valid": none. "same" (stride 1 only, as torch):
// dilation * (k - 1) in all, the left half rounded down, so an even extent puts one more on the
// right (torch's _convolution_mode). `op` names the caller in errors, which are torch's:
// "Invalid padding string: 'x'", "padding='same' is not supported for strided convolutions".
struct StringPadding {
  std::vector<int64_t> both, extra_right;
};
StringPadding string_padding(const std::string& mode, const std::vector<int64_t>& kernel,
                             const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation, const char* op);

// torch's _reversed_padding_repeated_twice: the F::pad list (last dim first, (left, right) pairs)
// that a non-"zeros" padding_mode pads with before a convolution with padding 0. `padding` is one
// size per spatial dim, or empty with `mode` "same" / "valid".
std::vector<int64_t> mode_pad_list(const std::vector<int64_t>& padding, const std::string& mode,
                                   const std::vector<int64_t>& kernel, const std::vector<int64_t>& dilation);

// The modules' constructor checks (torch's ValueErrors): a string padding is "same" or "valid",
// "same" needs stride 1, padding_mode is one of "zeros", "reflect", "replicate", "circular".
void check_conv_padding_options(const std::string& padding_string, const std::vector<int64_t>& stride,
                                const std::string& padding_mode, const char* module);

}  // namespace colony::nn::detail
