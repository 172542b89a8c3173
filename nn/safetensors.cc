#include "nn/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>

#include "nn/atomic_file.h"
#include "ops/raw_ops.h"

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
// stops at 128.
constexpr int kMaxDepth = 128;
// A shape of rank 33,000,000 was decoded and refused only by a later op; PyTorch's tensors have
// at most 64 dimensions too (its TensorIterator's limit), which no checkpoint comes near.
constexpr size_t kMaxRank = 64;
// Metadata is a free-form map of strings; files carry a handful of keys ("format", an epoch). Each
// key held in a std::map costs ~100 bytes of memory however short it is in the file (`"a":"",` is 7
// bytes): 7.5M keys in a 96 MB header took 2.7 GB. Allowing one key per 64 header bytes beyond the
// first 1024 keeps what metadata costs in memory within ~2x the header's size. (Tensors need no
// such cap: an entry is at least 50 bytes, `"":{"dtype":"U8","shape":[],"data_offsets":[0,0]}`,
// and decodes to a few hundred; 2M of them, the most a 100 MB header holds, parse in seconds.)
constexpr size_t kMetadataKeysAlways = 1024;
constexpr uint64_t kHeaderBytesPerMetadataKey = 64;

struct Entry {
  std::string name;
  DType dtype = kFloat32;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

// The header read as a stream of SAX events into Colony's own structures, in time linear in its
// size. nlohmann's callback parser (json::parse with a callback) rescans the parent object at each
// end_object, which made the header quadratic in the number of tensors: 40k tensors took 38 s.
// The header's shape is fixed, so a small state machine follows it:
//   depth 1: the top object, {name: entry, "__metadata__": {key: "string"}}
//   depth 2: an entry's fields (dtype, shape, data_offsets; others skipped) or a metadata key
//   depth 3: the numbers of shape and data_offsets
// Any error throws (nlohmann's sax_parse lets exceptions through), naming the file and the key.
class HeaderReader {
 public:
  HeaderReader(const std::string& source, uint64_t header_bytes)
      : source_(source),
        max_metadata_keys_(kMetadataKeysAlways + header_bytes / kHeaderBytesPerMetadataKey) {}

  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;

  // Values.
  bool null() { return scalar("null"); }
  bool boolean(bool) { return scalar("a boolean"); }
  bool number_integer(json::number_integer_t) { return number(false, 0); }  // negative
  bool number_unsigned(json::number_unsigned_t v) { return number(true, v); }
  bool number_float(json::number_float_t, const json::string_t&) { return number(false, 0); }
  bool string(json::string_t& s) {
    if (skip_depth_ > 0) return true;
    switch (where_) {
      case Where::kTop: bad(source_, "header is not a JSON object");
      case Where::kTopValue: not_an_entry();
      case Where::kMetadataValue:
        metadata.emplace(std::move(key_), std::move(s));
        where_ = Where::kMetadata;
        return true;
      case Where::kFieldValue:
        if (field_ == Field::kDtype) {
          entry_.dtype = parse_dtype(s, source_, entry_.name);
        } else if (field_ != Field::kOther) {
          not_an_entry();
        }
        where_ = Where::kEntry;
        return true;
      case Where::kShape:
      case Where::kOffsets: bad_number();
      default: return true;  // unreachable: strings come only as values
    }
  }
  bool binary(json::binary_t&) { return scalar("binary data"); }  // not produced by JSON text

  // Containers.
  bool start_object(std::size_t) {
    enter();
    if (skip_depth_ > 0) return ++skip_depth_, true;
    switch (where_) {
      case Where::kTop: where_ = Where::kTopKey; return true;
      case Where::kTopValue:
        if (key_ == "__metadata__") {
          where_ = Where::kMetadata;
        } else {
          entry_ = Entry{};
          entry_.name = std::move(key_);
          fields_seen_ = 0;
          other_fields_.clear();
          where_ = Where::kEntry;
        }
        return true;
      case Where::kMetadataValue: bad(source_, "__metadata__ value for \"" + key_ + "\" is not a string");
      case Where::kFieldValue:
        if (field_ != Field::kOther) not_an_entry();
        skip_depth_ = 1;
        return true;
      default: bad_number();  // in shape or data_offsets
    }
  }
  bool end_object() {
    --depth_;
    if (skip_depth_ > 0) return end_skipped();
    if (where_ == Where::kMetadata) {
      where_ = Where::kTopKey;
    } else if (where_ == Where::kEntry) {
      finish_entry();
      where_ = Where::kTopKey;
    } else {
      where_ = Where::kDone;  // the top object
    }
    return true;
  }
  bool start_array(std::size_t) {
    enter();
    if (skip_depth_ > 0) return ++skip_depth_, true;
    switch (where_) {
      case Where::kTop: bad(source_, "header is not a JSON object");
      case Where::kTopValue: not_an_entry();
      case Where::kMetadataValue: bad(source_, "__metadata__ value for \"" + key_ + "\" is not a string");
      case Where::kFieldValue:
        if (field_ == Field::kShape) {
          where_ = Where::kShape;
        } else if (field_ == Field::kOffsets) {
          where_ = Where::kOffsets;
          offsets_count_ = 0;
        } else if (field_ == Field::kOther) {
          skip_depth_ = 1;
        } else {
          not_an_entry();
        }
        return true;
      default: bad_number();
    }
  }
  bool end_array() {
    --depth_;
    if (skip_depth_ > 0) return end_skipped();
    if (where_ == Where::kOffsets && offsets_count_ != 2) not_an_entry();
    where_ = Where::kEntry;
    return true;
  }

  // Keys, checked for duplicates: nlohmann keeps the last silently, and two readers of one file
  // must not disagree on which tensor a name means.
  bool key(json::string_t& k) {
    if (skip_depth_ > 0) return true;
    if (where_ == Where::kTopKey) {
      if (k == "__metadata__") {
        if (seen_metadata_) twice(k);
        seen_metadata_ = true;
      }
      key_ = std::move(k);
      where_ = Where::kTopValue;
    } else if (where_ == Where::kMetadata) {
      if (metadata.count(k) != 0) twice(k);
      if (metadata.size() >= max_metadata_keys_) {
        bad(source_, "__metadata__ has more than " + std::to_string(max_metadata_keys_) +
                         " keys, the most allowed for a header of this size (1024 plus one per " +
                         std::to_string(kHeaderBytesPerMetadataKey) + " bytes): corrupt or hostile file");
      }
      key_ = std::move(k);
      where_ = Where::kMetadataValue;
    } else {  // an entry's field
      field_ = k == "dtype" ? Field::kDtype : k == "shape" ? Field::kShape : k == "data_offsets" ? Field::kOffsets
                                                                                                   : Field::kOther;
      if (field_ == Field::kOther) {
        if (!other_fields_.insert(k).second) twice(k);
      } else {
        const unsigned bit = 1u << static_cast<int>(field_);
        if ((fields_seen_ & bit) != 0) twice(k);
        fields_seen_ |= bit;
      }
      where_ = Where::kFieldValue;
    }
    return true;
  }

  [[noreturn]] bool parse_error(std::size_t, const std::string&, const json::exception& e) {
    // parse_error, and out_of_range for a number such as 1e400 that overflows a double.
    bad(source_, std::string("malformed JSON header: ") + e.what());
  }

  // After the parse: two tensors of one name (found by sorting, not hashing, so no input can make
  // it slower than n log n).
  void check_unique_names() const {
    std::vector<const std::string*> names;
    names.reserve(entries.size());
    for (const Entry& e : entries) names.push_back(&e.name);
    std::sort(names.begin(), names.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
    for (size_t i = 1; i < names.size(); ++i)
      if (*names[i] == *names[i - 1]) twice(*names[i]);
  }

 private:
  enum class Where { kTop, kTopKey, kTopValue, kMetadata, kMetadataValue, kEntry, kFieldValue, kShape, kOffsets, kDone };
  enum class Field { kDtype, kShape, kOffsets, kOther };

  void enter() {
    if (++depth_ > kMaxDepth) {
      bad(source_, "header nests arrays and objects more than " + std::to_string(kMaxDepth) +
                       " deep (a safetensors header needs 3): corrupt or hostile file");
    }
  }
  bool end_skipped() {
    if (--skip_depth_ == 0) where_ = Where::kEntry;
    return true;
  }
  bool scalar(const char* what) {
    if (skip_depth_ > 0) return true;
    switch (where_) {
      case Where::kTop: bad(source_, "header is not a JSON object");
      case Where::kTopValue: not_an_entry();
      case Where::kMetadataValue: bad(source_, "__metadata__ value for \"" + key_ + "\" is not a string");
      case Where::kFieldValue:
        if (field_ != Field::kOther) not_an_entry();
        where_ = Where::kEntry;
        return true;
      case Where::kShape:
      case Where::kOffsets: bad_number();
      default: bad(source_, std::string("unexpected ") + what);
    }
  }
  // A number: `value` is meaningful when `is_unsigned`.
  bool number(bool is_unsigned, uint64_t value) {
    if (skip_depth_ > 0) return true;
    if (where_ == Where::kShape) {
      if (!is_unsigned) bad(source_, "tensor \"" + entry_.name + "\" has a non-integer or negative dimension");
      if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        bad(source_, "tensor \"" + entry_.name + "\" has dimension " + std::to_string(value) + ", more than int64 holds");
      }
      if (entry_.shape.size() == kMaxRank) {
        bad(source_, "tensor \"" + entry_.name + "\" has more than " + std::to_string(kMaxRank) +
                         " dimensions (corrupt file?)");
      }
      entry_.shape.push_back(static_cast<int64_t>(value));
      return true;
    }
    if (where_ == Where::kOffsets) {
      if (!is_unsigned) bad(source_, "tensor \"" + entry_.name + "\" has invalid data_offsets");
      if (offsets_count_ == 2) not_an_entry();
      (offsets_count_++ == 0 ? entry_.begin : entry_.end) = value;
      return true;
    }
    return scalar("a number");
  }
  [[noreturn]] void bad_number() {
    if (where_ == Where::kShape) bad(source_, "tensor \"" + entry_.name + "\" has a non-integer or negative dimension");
    bad(source_, "tensor \"" + entry_.name + "\" has invalid data_offsets");
  }
  [[noreturn]] void not_an_entry() {
    if (where_ == Where::kTopValue && key_ == "__metadata__") bad(source_, "__metadata__ must be an object of strings");
    const std::string& name = where_ == Where::kTopValue ? key_ : entry_.name;
    bad(source_, "entry \"" + name + "\" needs \"dtype\" (string), \"shape\" (array) and \"data_offsets\" ([begin, end])");
  }
  [[noreturn]] void twice(const std::string& key) const {
    bad(source_, "header has the key \"" + key + "\" twice in one object");
  }
  void finish_entry() {
    if (fields_seen_ != 0b111) not_an_entry();
    Entry& e = entry_;
    if (e.end < e.begin) bad(source_, "tensor \"" + e.name + "\" has data_offsets end before begin");
    const std::optional<int64_t> numel = try_shape_numel(e.shape);
    const std::optional<int64_t> nbytes = numel ? checked_mul(*numel, element_size(e.dtype)) : std::nullopt;
    if (!nbytes) {
      bad(source_, "tensor \"" + e.name + "\" of shape " + shape_str(e.shape) + " and dtype " + dtype_name(e.dtype) +
                       " would need more bytes than int64 can count (corrupt file?)");
    }
    const auto expected = static_cast<uint64_t>(*nbytes);
    if (e.end - e.begin != expected) {
      bad(source_, "tensor \"" + e.name + "\" of shape " + shape_str(e.shape) + " and dtype " + dtype_name(e.dtype) +
                       " needs " + std::to_string(expected) + " bytes, data_offsets give " +
                       std::to_string(e.end - e.begin));
    }
    entries.push_back(std::move(e));
  }

  const std::string& source_;
  const size_t max_metadata_keys_;
  Where where_ = Where::kTop;
  int depth_ = 0;
  int skip_depth_ = 0;  // > 0 inside the value of a field this reader does not use
  std::string key_;     // the last key at depth 1 or in __metadata__
  Field field_ = Field::kOther;
  Entry entry_;  // the entry being read
  unsigned fields_seen_ = 0;
  std::set<std::string> other_fields_;  // an entry's unused fields, for the duplicate check
  int offsets_count_ = 0;
  bool seen_metadata_ = false;
};

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
  HeaderReader reader(source, len);
  json::sax_parse(bytes.data() + 8, bytes.data() + 8 + len, &reader);
  reader.check_unique_names();
  const uint64_t data_size = bytes.size() - 8 - len;
  const char* data = bytes.data() + 8 + len;

  SafetensorsContents out;
  out.metadata = std::move(reader.metadata);
  std::vector<Entry>& entries = reader.entries;
  // By (begin, end), so a zero-byte tensor comes before the tensor that starts at its offset; stable,
  // so tensors of one offset keep the header's order.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
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
