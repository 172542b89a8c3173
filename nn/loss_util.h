// What the loss functions of F:: share (nn/functional_loss.cc, functional_loss_margin.cc): the
// reduction, the checks of their arguments with messages that name the op and say what was
// expected, and a 0-d zero to pair with where().
#pragma once

#include <string>

#include "nn/functional.h"

namespace colony::nn::functional::detail {

// Throws std::invalid_argument("<op>: <what>").
[[noreturn]] void fail(const char* op, const std::string& what);
// Mean, Sum or None; BatchMean is kl_div's alone.
void check_reduction(const char* op, Reduction r);
// The loss reduced as `r` says (Mean, Sum, or None: the loss itself).
Tensor reduce(const Tensor& loss, Reduction r);
void check_floating(const char* op, const char* what, const Tensor& t);
// `other` (when defined) on input's device.
void check_same_device(const char* op, const char* what, const Tensor& input, const Tensor& other);
// input and target of one shape (the regression losses, binary cross-entropy), on one device.
void check_same_shape(const char* op, const Tensor& input, const Tensor& target);
// An elementwise weight must broadcast to the input's shape without growing it.
void check_broadcasts_to(const char* op, const char* what, const Tensor& t, const Shape& shape);
// A 0-d zero of like's dtype and device.
Tensor zero_like_scalar(const Tensor& like);

}  // namespace colony::nn::functional::detail
