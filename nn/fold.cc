// nn::Unfold and nn::Fold (nn/fold.h): F::unfold / F::fold with the module's options.
#include "nn/fold.h"

#include "nn/repr.h"

namespace colony::nn {

Unfold::Unfold(const UnfoldOptions& options) : options(options) {}

Tensor Unfold::forward(const Tensor& input) { return functional::unfold(input, options); }

std::string Unfold::extra_repr() const {
  return "kernel_size=" + repr::int_or_tuple(options.kernel_size()) + ", dilation=" +
         repr::int_or_tuple(options.dilation()) + ", padding=" + repr::int_or_tuple(options.padding()) +
         ", stride=" + repr::int_or_tuple(options.stride());
}

Fold::Fold(const FoldOptions& options) : options(options) {}

Tensor Fold::forward(const Tensor& input) { return functional::fold(input, options); }

std::string Fold::extra_repr() const {
  return "output_size=" + repr::int_or_tuple(options.output_size()) + ", kernel_size=" +
         repr::int_or_tuple(options.kernel_size()) + ", dilation=" + repr::int_or_tuple(options.dilation()) +
         ", padding=" + repr::int_or_tuple(options.padding()) + ", stride=" + repr::int_or_tuple(options.stride());
}

}  // namespace colony::nn
