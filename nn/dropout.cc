#include "nn/dropout.h"

namespace colony::nn {
namespace {

functional::DropoutFuncOptions channel_options(const DropoutOptions& o, bool training) {
  return functional::DropoutFuncOptions().p(o.p()).training(training).inplace(o.inplace());
}

functional::AlphaDropoutFuncOptions alpha_options(const DropoutOptions& o, bool training) {
  return functional::AlphaDropoutFuncOptions(o.p()).training(training).inplace(o.inplace());
}

}  // namespace

Tensor Dropout1d::forward(const Tensor& input) {
  return functional::dropout1d(input, channel_options(options, is_training()));
}
Tensor Dropout2d::forward(const Tensor& input) {
  return functional::dropout2d(input, channel_options(options, is_training()));
}
Tensor Dropout3d::forward(const Tensor& input) {
  return functional::dropout3d(input, channel_options(options, is_training()));
}
Tensor AlphaDropout::forward(const Tensor& input) {
  return functional::alpha_dropout(input, alpha_options(options, is_training()));
}
Tensor FeatureAlphaDropout::forward(const Tensor& input) {
  return functional::feature_alpha_dropout(input, alpha_options(options, is_training()));
}

}  // namespace colony::nn
