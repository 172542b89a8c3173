// The case tables the golden scripts write (tests/golden_cases.py): an op's inputs, torch's output
// and torch's gradient of each input for sum(out * grad_output). golden_check.h runs Colony's op on
// the same inputs and compares.
#pragma once

#include <limits>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/shape.h"

namespace colony::testing::golden {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Input {
  DType dtype;
  Shape shape;
  std::vector<double> values;
  std::vector<double> grad;  // empty when the input gets none (not floating, or no gradient asked)
};

struct Case {
  const char* name;
  std::vector<Input> inputs;
  DType out_dtype;
  Shape out_shape;
  std::vector<double> out;
  std::vector<double> grad_output;  // empty when the output does not require grad
};

}  // namespace colony::testing::golden
