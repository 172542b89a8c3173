// Shapes, strides and the arithmetic on them that every op needs (broadcasting, dim wrapping).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace colony {

using Shape = std::vector<int64_t>;

// Number of elements; throws std::overflow_error naming the shape when the product of the sizes
// does not fit in int64 (a shape read from a file can claim [2^62, 4]).
int64_t shape_numel(const Shape& shape);
// The same without throwing: nullopt when the product overflows int64 or a size is negative. Readers
// of files and messages use it to report the file and the tensor along with the shape.
std::optional<int64_t> try_shape_numel(const Shape& shape);
// a * b for sizes and byte counts that come from outside; nullopt when it overflows int64. The one
// place such products are checked (__builtin_mul_overflow: one instruction and a flag test).
std::optional<int64_t> checked_mul(int64_t a, int64_t b);
// The strides of a contiguous tensor of `shape` (row-major; a size of 0 counts as 1). Throws
// std::overflow_error naming the shape when they do not fit int64, which a shape with a zero-sized
// dimension can reach while its element count (0) fits.
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
