// The safetensors format (https://github.com/huggingface/safetensors), which PyTorch and others read:
// an 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"key": "value"}}
// then the raw little-endian data, offsets relative to the end of the header.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace colony::io {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

struct SafetensorsContents {
  NamedTensors tensors;  // in file order (by data offset)
  std::map<std::string, std::string> metadata;
};

// Serializes to bytes (tensors may be on any device, any strides; written contiguous).
std::string encode_safetensors(const NamedTensors& tensors, const std::map<std::string, std::string>& metadata = {});
// Parses bytes; `source` names the file in errors. Rejects truncated data, malformed JSON, unknown
// dtypes, offsets that overlap, leave holes or run past the end, and shapes that disagree with the
// byte counts — always with an error that says which.
SafetensorsContents decode_safetensors(const std::string& bytes, const std::string& source);

// Atomic write (see atomic_file.h) and read of a .safetensors file.
void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata = {});
SafetensorsContents load_safetensors(const std::string& path);

// "F32" <-> DType.
const char* safetensors_dtype_name(DType t);

}  // namespace colony::io
