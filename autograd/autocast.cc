#include "autograd/autocast.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "autograd/ops.h"
#include "tensor/grad_mode.h"

namespace colony {
namespace {

struct DeviceState {
  bool enabled = false;
  DType dtype;
};

struct Entry {
  std::weak_ptr<TensorImpl> source;  // the address may be reused once the weight is gone
  uint32_t version;
  Tensor cast;
};

struct ThreadState {
  // PyTorch's defaults: bfloat16 on the CPU, float16 on CUDA.
  DeviceState cpu{false, kBFloat16};
  DeviceState cuda{false, kFloat16};
  int nesting = 0;
  std::map<std::pair<const TensorImpl*, DType>, Entry> cache;

  DeviceState& of(DeviceType d) { return d == DeviceType::CPU ? cpu : cuda; }
};

ThreadState& state() {
  thread_local ThreadState s;
  return s;
}

const char* device_name(DeviceType d) { return d == DeviceType::CPU ? "cpu" : "cuda"; }

// float64 and integers keep their dtype under autocast, as PyTorch's is_eligible().
bool eligible(const Tensor& t) { return t.defined() && is_floating(t.dtype()) && t.dtype() != kFloat64; }

bool active_for(const Tensor& t) { return state().of(t.device().type).enabled; }

}  // namespace

bool is_autocast_enabled(DeviceType device) { return state().of(device).enabled; }

DType get_autocast_dtype(DeviceType device) { return state().of(device).dtype; }

AutocastGuard::AutocastGuard(DeviceType device, DType dtype, bool enabled) : device_(device) {
  if (dtype != kFloat16 && dtype != kBFloat16) {
    throw std::invalid_argument(std::string("AutocastGuard: dtype must be float16 or bfloat16 on ") +
                                device_name(device) + ", got " + dtype_name(dtype));
  }
  DeviceState& s = state().of(device);
  prev_enabled_ = s.enabled;
  prev_dtype_ = s.dtype;
  s.enabled = enabled;
  s.dtype = dtype;
  ++state().nesting;
}

AutocastGuard::AutocastGuard(DeviceType device, bool enabled)
    : AutocastGuard(device, get_autocast_dtype(device), enabled) {}

AutocastGuard::~AutocastGuard() {
  DeviceState& s = state().of(device_);
  s.enabled = prev_enabled_;
  s.dtype = prev_dtype_;
  // Leaving the outermost region frees the weights' copies (torch.autocast.__exit__).
  if (--state().nesting == 0) state().cache.clear();
}

namespace autocast {
namespace {

// To the autocast dtype (through the cast cache for weights).
Tensor to_lower_precision(const Tensor& t) {
  if (!eligible(t) || !active_for(t)) return t;
  const DType target = state().of(t.device().type).dtype;
  if (t.dtype() == target) return t;
  // Only weights are cached: float32 leaves that require grad, and only while recording (a copy
  // made under no_grad has no history to give a later backward).
  const bool cacheable = t.dtype() == kFloat32 && t.is_leaf() && t.requires_grad() && GradMode::is_enabled();
  if (!cacheable) return colony::to(t, t.device(), target);
  auto& cache = state().cache;
  const auto key = std::make_pair(static_cast<const TensorImpl*>(t.impl()), target);
  auto it = cache.find(key);
  if (it != cache.end() && it->second.source.lock() == t.impl_ptr() && it->second.version == t.version()) {
    return it->second.cast;
  }
  Tensor cast = colony::to(t, t.device(), target);
  cache[key] = Entry{t.impl_ptr(), t.version(), cast};
  return cast;
}

// 16-bit floats to float32.
Tensor to_float32(const Tensor& t) {
  if (!eligible(t) || t.dtype() == kFloat32 || !active_for(t)) return t;
  return colony::to(t, t.device(), kFloat32);
}

}  // namespace

CastPolicy policy(Op op) {
#define COLONY_POLICY_CASE(name, policy) \
  case Op::name:                         \
    return CastPolicy::policy;
  switch (op) { COLONY_FOR_EACH_AUTOCAST_OP(COLONY_POLICY_CASE) }
#undef COLONY_POLICY_CASE
  throw std::logic_error("autocast: an op outside the policy table");
}

const char* op_name(Op op) {
#define COLONY_NAME_CASE(name, policy) \
  case Op::name:                       \
    return #name;
  switch (op) { COLONY_FOR_EACH_AUTOCAST_OP(COLONY_NAME_CASE) }
#undef COLONY_NAME_CASE
  return "?";
}

Tensor cast(Op op, const Tensor& t) {
  return policy(op) == CastPolicy::LowerPrecision ? to_lower_precision(t) : to_float32(t);
}

bool casts(Op op, const Tensor& t) {
  if (!eligible(t) || !active_for(t)) return false;
  if (policy(op) == CastPolicy::Float32) return t.dtype() != kFloat32;
  return t.dtype() != state().of(t.device().type).dtype;
}

size_t cache_size() { return state().cache.size(); }

void clear_cache() { state().cache.clear(); }

struct CacheScope::Saved {
  std::map<std::pair<const TensorImpl*, DType>, Entry> cache;
  int nesting;
};

CacheScope::CacheScope() : saved_(new Saved{std::move(state().cache), state().nesting}) {
  state().cache.clear();
  // The scope counts as one open region: a guard that opens and closes inside it never empties the
  // scope's cache midway, whether or not a region was open outside (the forward runs inside the
  // caller's region, the recomputation usually outside any), so both cache alike.
  state().nesting = 1;
}

CacheScope::~CacheScope() {
  state().cache = std::move(saved_->cache);
  state().nesting = saved_->nesting;
}

}  // namespace autocast
}  // namespace colony
