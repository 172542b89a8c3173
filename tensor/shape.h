// Shapes, strides and the arithmetic on them that every op needs (broadcasting, dim wrapping).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace colony {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& shape);
Shape contiguous_strides(const Shape& shape);
// "[32, 3, 32, 32]"
std::string shape_str(const Shape& shape);

// NumPy broadcasting of two shapes; throws naming `op` and both shapes when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Maps a possibly negative dim into [0, ndim); throws "op: dim D out of range for a N-D tensor".
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);
// Same for a list of dims; throws on duplicates.
std::vector<int64_t> wrap_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op);

}  // namespace colony
