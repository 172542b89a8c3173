// Tensor metadata and autograd bookkeeping. The ops live in raw_ops.h, and so do the members that run
// kernels (item in copy.cc, the raw in-place writes in tensor_inplace.cc); the differentiable
// members are in autograd/tensor_methods.cc.
#include "tensor/tensor.h"

#include <stdexcept>

#include "runtime/caching_allocator.h"
#include "runtime/caching_host_allocator.h"
#include "tensor/grad_mode.h"
#include "runtime/stream.h"
#ifdef COLONY_WITH_CUDA
#include "runtime/cuda/runtime.h"
#include "runtime/cuda.h"
#endif

namespace colony {

TensorImpl::TensorImpl(Storage s, Shape sz, Shape st, int64_t off, DType t)
    : storage(std::move(s)), sizes(std::move(sz)), strides(std::move(st)), offset(off), dtype(t) {}

TensorImpl::~TensorImpl() = default;

namespace {
const TensorImpl& checked(const TensorImpl* impl) {
  if (impl == nullptr) throw std::logic_error("Tensor: use of an undefined tensor");
  return *impl;
}
}  // namespace

const Shape& Tensor::sizes() const { return checked(impl_.get()).sizes; }
const Shape& Tensor::strides() const { return checked(impl_.get()).strides; }
int64_t Tensor::size(int64_t d) const { return sizes()[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim(), "stride")]; }
int64_t Tensor::dim() const { return static_cast<int64_t>(sizes().size()); }
int64_t Tensor::numel() const { return shape_numel(sizes()); }
int64_t Tensor::storage_offset() const { return checked(impl_.get()).offset; }
DType Tensor::dtype() const { return checked(impl_.get()).dtype; }
Device Tensor::device() const { return checked(impl_.get()).storage->device(); }
const Storage& Tensor::storage() const { return checked(impl_.get()).storage; }
uint32_t Tensor::version() const { return storage()->version(); }

bool Tensor::is_contiguous() const {
  const TensorImpl& t = checked(impl_.get());
  int64_t expected = 1;
  for (size_t i = t.sizes.size(); i-- > 0;) {
    if (t.sizes[i] == 1) continue;
    if (t.strides[i] != expected) return false;
    expected *= t.sizes[i];
  }
  return true;
}

void* Tensor::data_ptr_raw() const {
  const TensorImpl& t = checked(impl_.get());
  return static_cast<char*>(t.storage->data()) + t.offset * colony::element_size(t.dtype);
}

template <typename T>
T* Tensor::data_ptr() const {
  if (dtype() != dtype_of<T>::value) {
    throw std::invalid_argument(std::string("data_ptr: tensor has dtype ") + dtype_name(dtype()) +
                                ", requested " + dtype_name(dtype_of<T>::value));
  }
  return static_cast<T*>(data_ptr_raw());
}

template float* Tensor::data_ptr<float>() const;
template double* Tensor::data_ptr<double>() const;
template int64_t* Tensor::data_ptr<int64_t>() const;
template int32_t* Tensor::data_ptr<int32_t>() const;
template uint8_t* Tensor::data_ptr<uint8_t>() const;
template bool* Tensor::data_ptr<bool>() const;
template Half* Tensor::data_ptr<Half>() const;
template BFloat16* Tensor::data_ptr<BFloat16>() const;

bool Tensor::is_pinned() const {
#ifdef COLONY_WITH_CUDA
  return is_cpu() && cuda::device_count() > 0 && kernels::cuda::is_pinned(data_ptr_raw());
#else
  return false;
#endif
}

void Tensor::record_stream(const Stream& stream) const {
  if (!defined()) throw std::invalid_argument("record_stream: the tensor is undefined");
  if (stream.device().is_cpu()) return;  // CPU work is done when it returns
  void* base = storage()->data();
  if (is_cuda()) {
    if (stream.device() != device())
      throw std::invalid_argument("record_stream: the tensor is on " + device().str() + ", the stream on " +
                                  stream.device().str());
    // Memory no caching allocator handed out (from_blob of a CUDA pointer) has no block to hold
    // back: whoever owns it decides when it is freed, as in PyTorch.
    if (auto* caching = dynamic_cast<CachingAllocator*>(storage()->allocator()))
      caching->record_stream(base, stream.handle());
  } else if (pinned_caching_allocator()->owns(base)) {
    pinned_caching_allocator()->record_use(base, stream);
  }
}

// ---- autograd metadata ----

AutogradMeta& Tensor::meta() const {
  TensorImpl& t = const_cast<TensorImpl&>(checked(impl_.get()));
  if (!t.autograd) t.autograd = std::make_unique<AutogradMeta>();
  return *t.autograd;
}

bool Tensor::requires_grad() const {
  const TensorImpl& t = checked(impl_.get());
  return t.autograd && (t.autograd->requires_grad || t.autograd->grad_fn);
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  if (!is_leaf()) {
    throw std::logic_error(
        "requires_grad_: you can only change requires_grad flags of leaf variables; this tensor is the "
        "output of an operation (use detach() to get a leaf)");
  }
  if (requires_grad && !is_floating(dtype())) {
    throw std::invalid_argument(std::string("requires_grad_: only floating point tensors can require "
                                            "gradients, got dtype ") + dtype_name(dtype()));
  }
  meta().requires_grad = requires_grad;
  return *this;
}

bool Tensor::is_leaf() const {
  const TensorImpl& t = checked(impl_.get());
  return !t.autograd || !t.autograd->grad_fn;
}

Tensor Tensor::grad() const {
  const TensorImpl& t = checked(impl_.get());
  return t.autograd ? t.autograd->grad : Tensor();
}

Tensor& Tensor::mutable_grad() {
  return meta().grad;
}

void Tensor::set_grad(const Tensor& g) {
  if (g.defined()) {
    if (g.sizes() != sizes()) {
      throw std::invalid_argument("set_grad: gradient shape " + shape_str(g.sizes()) +
                                  " does not match tensor shape " + shape_str(sizes()));
    }
    if (g.device() != device() || g.dtype() != dtype()) {
      throw std::invalid_argument("set_grad: gradient is " + std::string(dtype_name(g.dtype())) + " on " +
                                  g.device().str() + ", tensor is " + dtype_name(dtype()) + " on " +
                                  device().str());
    }
  }
  meta().grad = g;
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> none;
  const TensorImpl& t = checked(impl_.get());
  return t.autograd ? t.autograd->grad_fn : none;
}

int64_t Tensor::output_nr() const {
  const TensorImpl& t = checked(impl_.get());
  return t.autograd ? t.autograd->output_nr : 0;
}

}  // namespace colony
