// How module printing spells values, following PyTorch's Python repr: floats as Python prints them
// (1e-05, 0.25, 1.0), booleans as True/False, a square pair as one number.
#pragma once

#include <string>

#include "base/int2.h"
#include "base/int3.h"

namespace colony::nn::repr {

std::string py_float(double v);
inline std::string py_bool(bool b) { return b ? "True" : "False"; }
// "(5, 5)", as PyTorch prints a tuple.
std::string tuple(const Int2& v);
// "2" when both sizes are equal (PyTorch keeps what the user passed; a square size is nearly always
// passed as one number), else "(2, 3)".
std::string int_or_tuple(const Int2& v);
// "(3,)", as PyTorch prints a one-element tuple (Conv1d's kernel_size).
inline std::string tuple1(int64_t v) { return "(" + std::to_string(v) + ",)"; }

// The 3-D pools' (d, h, w) sizes: "(2, 3, 1)", and "2" when all three are equal (as torch prints a
// size given as one number).
std::string tuple3(const Int3& v);
std::string int_or_tuple3(const Int3& v);

}  // namespace colony::nn::repr
