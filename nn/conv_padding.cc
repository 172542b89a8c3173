#include "nn/conv_padding.h"

#include <stdexcept>

namespace colony::nn::detail {

StringPadding string_padding(const std::string& mode, const std::vector<int64_t>& kernel,
                             const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation, const char* op) {
  StringPadding p{std::vector<int64_t>(kernel.size(), 0), std::vector<int64_t>(kernel.size(), 0)};
  if (mode == "valid") return p;
  if (mode != "same") throw std::invalid_argument(std::string(op) + ": Invalid padding string: '" + mode + "'");
  for (int64_t s : stride) {
    if (s != 1) {
      throw std::invalid_argument(std::string(op) + ": padding='same' is not supported for strided convolutions");
    }
  }
  for (size_t i = 0; i < kernel.size(); ++i) {
    const int64_t total = dilation[i] * (kernel[i] - 1);
    p.both[i] = total / 2;
    p.extra_right[i] = total - 2 * (total / 2);
  }
  return p;
}

std::vector<int64_t> mode_pad_list(const std::vector<int64_t>& padding, const std::string& mode,
                                   const std::vector<int64_t>& kernel, const std::vector<int64_t>& dilation) {
  std::vector<int64_t> left = padding, right = padding;
  if (!mode.empty()) {
    const StringPadding p = string_padding(mode, kernel, std::vector<int64_t>(kernel.size(), 1), dilation, "conv");
    left = p.both;
    right = p.both;
    for (size_t i = 0; i < right.size(); ++i) right[i] += p.extra_right[i];
  }
  std::vector<int64_t> list;
  for (size_t i = left.size(); i-- > 0;) {
    list.push_back(left[i]);
    list.push_back(right[i]);
  }
  return list;
}

void check_conv_padding_options(const std::string& padding_string, const std::vector<int64_t>& stride,
                                const std::string& padding_mode, const char* module) {
  if (!padding_string.empty()) {
    if (padding_string != "same" && padding_string != "valid") {
      throw std::invalid_argument(std::string(module) + ": Invalid padding string '" + padding_string +
                                  "', should be one of {'same', 'valid'}");
    }
    for (int64_t s : stride) {
      if (padding_string == "same" && s != 1) {
        throw std::invalid_argument(std::string(module) + ": padding='same' is not supported for strided convolutions");
      }
    }
  }
  if (padding_mode != "zeros" && padding_mode != "reflect" && padding_mode != "replicate" && padding_mode != "circular") {
    throw std::invalid_argument(std::string(module) +
                                ": padding_mode must be one of {'zeros', 'reflect', 'replicate', 'circular'}, but got "
                                "padding_mode='" + padding_mode + "'");
  }
}

}  // namespace colony::nn::detail
