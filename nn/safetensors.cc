#include "nn/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "nn/atomic_file.h"
#include "tensor/raw_ops.h"

namespace colony::io {
namespace {

using json = nlohmann::json;

// The reference implementation caps the header at 100 MB; a larger length is a corrupt file.
constexpr uint64_t kMaxHeader = 100'000'000;

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  throw std::runtime_error("safetensors " + source + ": " + what);
}

DType parse_dtype(const std::string& s, const std::string& source, const std::string& name) {
  static const std::pair<const char*, DType> table[] = {
      {"F32", kFloat32}, {"F64", kFloat64}, {"F16", kFloat16}, {"BF16", kBFloat16},
      {"I64", kInt64},   {"I32", kInt32},   {"U8", kUInt8},    {"BOOL", kBool}};
  for (const auto& [n, t] : table)
    if (s == n) return t;
  bad(source, "tensor \"" + name + "\" has unsupported dtype \"" + s +
                  "\" (expected F32, F64, F16, BF16, I64, I32, U8 or BOOL)");
}

}  // namespace

const char* safetensors_dtype_name(DType t) {
  switch (t) {
    case kFloat32: return "F32";
    case kFloat64: return "F64";
    case kFloat16: return "F16";
    case kBFloat16: return "BF16";
    case kInt64: return "I64";
    case kInt32: return "I32";
    case kUInt8: return "U8";
    case kBool: return "BOOL";
  }
  return "?";
}

std::string encode_safetensors(const NamedTensors& tensors, const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<Tensor> host;
  host.reserve(tensors.size());
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") throw std::invalid_argument("safetensors: \"__metadata__\" is reserved as a tensor name");
    if (header.contains(name)) throw std::invalid_argument("safetensors: duplicate tensor name \"" + name + "\"");
    Tensor h = raw::contiguous(raw::to(t, kCPU, t.dtype()));
    uint64_t n = static_cast<uint64_t>(h.nbytes());
    header[name] = {{"dtype", safetensors_dtype_name(h.dtype())},
                    {"shape", h.sizes()},
                    {"data_offsets", {offset, offset + n}}};
    offset += n;
    host.push_back(h);
  }
  std::string head = header.dump();
  // Pad with spaces so the data starts 8-byte aligned, as the reference writer does.
  head.append((8 - head.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + head.size() + offset);
  uint64_t len = head.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  out += head;
  for (const Tensor& h : host) out.append(static_cast<const char*>(h.data_ptr_raw()), h.nbytes());
  return out;
}

SafetensorsContents decode_safetensors(const std::string& bytes, const std::string& source) {
  if (bytes.size() < 8) bad(source, "file is " + std::to_string(bytes.size()) + " bytes, too short for the 8-byte header length");
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (len > kMaxHeader) bad(source, "header length " + std::to_string(len) + " exceeds the 100 MB limit (corrupt file?)");
  if (8 + len > bytes.size()) {
    bad(source, "truncated: header needs " + std::to_string(len) + " bytes, file has " + std::to_string(bytes.size() - 8));
  }
  json header;
  try {
    header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<int64_t>(len));
  } catch (const json::parse_error& e) {
    bad(source, std::string("malformed JSON header: ") + e.what());
  }
  if (!header.is_object()) bad(source, "header is not a JSON object");
  const uint64_t data_size = bytes.size() - 8 - len;
  const char* data = bytes.data() + 8 + len;

  SafetensorsContents out;
  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    uint64_t begin, end;
  };
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) bad(source, "__metadata__ must be an object of strings");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) bad(source, "__metadata__ value for \"" + m.key() + "\" is not a string");
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets") ||
        !v["dtype"].is_string() || !v["shape"].is_array() || !v["data_offsets"].is_array() ||
        v["data_offsets"].size() != 2) {
      bad(source, "entry \"" + name + "\" needs \"dtype\" (string), \"shape\" (array) and \"data_offsets\" ([begin, end])");
    }
    Entry e;
    e.name = name;
    e.dtype = parse_dtype(v["dtype"].get<std::string>(), source, name);
    for (const json& d : v["shape"]) {
      if (!d.is_number_unsigned()) bad(source, "tensor \"" + name + "\" has a non-integer or negative dimension");
      e.shape.push_back(d.get<int64_t>());
    }
    const json& off = v["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) bad(source, "tensor \"" + name + "\" has invalid data_offsets");
    e.begin = off[0].get<uint64_t>();
    e.end = off[1].get<uint64_t>();
    if (e.end < e.begin) bad(source, "tensor \"" + name + "\" has data_offsets end before begin");
    uint64_t expected = static_cast<uint64_t>(shape_numel(e.shape)) * static_cast<uint64_t>(element_size(e.dtype));
    if (e.end - e.begin != expected) {
      bad(source, "tensor \"" + name + "\" of shape " + shape_str(e.shape) + " and dtype " + dtype_name(e.dtype) +
                      " needs " + std::to_string(expected) + " bytes, data_offsets give " + std::to_string(e.end - e.begin));
    }
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
  uint64_t pos = 0;
  for (const Entry& e : entries) {
    if (e.begin != pos) {
      bad(source, "tensor \"" + e.name + "\" starts at byte " + std::to_string(e.begin) + ", expected " +
                      std::to_string(pos) + " (overlapping or non-contiguous data)");
    }
    if (e.end > data_size) {
      bad(source, "truncated: tensor \"" + e.name + "\" ends at byte " + std::to_string(e.end) + " of the data, which has " +
                      std::to_string(data_size));
    }
    pos = e.end;
  }
  if (pos != data_size) {
    bad(source, std::to_string(data_size - pos) + " trailing bytes after the last tensor (corrupt file?)");
  }
  for (const Entry& e : entries) {
    Tensor t = raw::empty(e.shape, TensorOptions(e.dtype));
    if (e.end > e.begin) std::memcpy(t.data_ptr_raw(), data + e.begin, e.end - e.begin);
    if (e.dtype == kBool) {
      // Anything but 0/1 in a bool would be undefined behaviour when read.
      const uint8_t* b = static_cast<const uint8_t*>(t.data_ptr_raw());
      for (int64_t i = 0; i < t.numel(); ++i)
        if (b[i] > 1) bad(source, "tensor \"" + e.name + "\" holds a BOOL byte other than 0 or 1");
    }
    out.tensors.emplace_back(e.name, t);
  }
  return out;
}

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata) {
  write_file_atomic(path, encode_safetensors(tensors, metadata));
}

SafetensorsContents load_safetensors(const std::string& path) { return decode_safetensors(read_file(path), path); }

}  // namespace colony::io
