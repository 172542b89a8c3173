#include "nn/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
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

// The format needs 3 levels ({name: {"shape": [..]}}); serde_json, which the reference reader uses,
// stops at 128. Checked on the raw bytes before parsing, in constant memory: nlohmann's parser
// would first build the whole tree (50 MB of '[' took 3.7 GB and 13 s before it failed).
constexpr int kMaxDepth = 128;

void check_depth(const char* p, uint64_t n, const std::string& source) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (uint64_t i = 0; i < n; ++i) {
    const char c = p[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) {
        bad(source, "header nests arrays and objects more than " + std::to_string(kMaxDepth) + " deep (at byte " +
                        std::to_string(8 + i) + "; a safetensors header needs 3): corrupt or hostile file");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

// Parses the header, refusing duplicate keys at any level: nlohmann keeps the last silently, and
// two readers of one file must not disagree on which tensor a name means.
json parse_header(const char* p, uint64_t n, const std::string& source) {
  check_depth(p, n, source);
  std::vector<std::set<std::string>> keys;  // one set per open object
  auto on_event = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      keys.pop_back();
    } else if (event == json::parse_event_t::key && !keys.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!keys.back().insert(key).second) bad(source, "header has the key \"" + key + "\" twice in one object");
    }
    return true;
  };
  try {
    return json::parse(p, p + n, on_event);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number such as 1e400 that overflows a double.
    bad(source, std::string("malformed JSON header: ") + e.what());
  }
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
  const json header = parse_header(bytes.data() + 8, len, source);
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
      if (d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        bad(source, "tensor \"" + name + "\" has dimension " + std::to_string(d.get<uint64_t>()) + ", more than int64 holds");
      }
      e.shape.push_back(d.get<int64_t>());
    }
    const json& off = v["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) bad(source, "tensor \"" + name + "\" has invalid data_offsets");
    e.begin = off[0].get<uint64_t>();
    e.end = off[1].get<uint64_t>();
    if (e.end < e.begin) bad(source, "tensor \"" + name + "\" has data_offsets end before begin");
    const std::optional<int64_t> numel = try_shape_numel(e.shape);
    const std::optional<int64_t> nbytes = numel ? checked_mul(*numel, element_size(e.dtype)) : std::nullopt;
    if (!nbytes) {
      bad(source, "tensor \"" + name + "\" of shape " + shape_str(e.shape) + " and dtype " + dtype_name(e.dtype) +
                      " would need more bytes than int64 can count (corrupt file?)");
    }
    const auto expected = static_cast<uint64_t>(*nbytes);
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
