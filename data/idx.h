// IDX files (the MNIST format): a big-endian header — magic 0x0000 08 D (unsigned bytes, D
// dimensions), then D 32-bit sizes — followed by the bytes. Read plain or gzip-compressed (zlib
// reads both through the same calls).
#pragma once

#include <string>

#include "data/dataset.h"
#include "data/image_dataset.h"

namespace colony::data {

// The array of an IDX file of unsigned bytes with `dims` dimensions, as a uint8 tensor of the header's
// shape. Checks the magic number and that the data is exactly as long as the header says; errors name
// the file.
Tensor read_idx_ubyte(const std::string& path, int dims);

// `root`/`name` when it exists, else `root`/`name`.gz when that exists, else "".
std::string find_idx_file(const std::string& root, const std::string& name);

// The images and labels of MNIST-format datasets ("train" or "t10k" files in `root`), as [N, 1, H, W]
// uint8 images and int64 labels in 0..9. `dataset` names the dataset in errors and `how_to_get`
// follows the message for missing files.
InMemoryImageDataset load_idx_dataset(const std::string& root, Split split, const std::string& dataset,
                                      const std::string& how_to_get);

}  // namespace colony::data
