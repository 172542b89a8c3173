// The convolutions' CUDA entry points (kernels/common/conv.h, which says what they do) on cuDNN:
// 2-D and 3-D alike, through the Nd descriptors of one ConvShape.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/conv.h"
#include "runtime/cuda/backend_flags.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cudnn_policy.h"
#include "runtime/cuda/handle_pool.h"
#include "runtime/cuda/runtime.h"
#include "runtime/cuda/workspaces.h"

namespace colony::kernels::cuda {
namespace {

// Returns `bytes` of device memory valid until the convolution call that asked for it returns
// (work queued on the same stream may still use it; stream-ordered reuse makes that safe).
using WorkspaceAllocator = std::function<void*(size_t bytes)>;

// cuDNN asks for scratch memory once it has chosen an algorithm; it comes from the caching
// allocator of the current device (run_kernel made it current) through KernelScratch, on the
// stream the call queues on, and goes back to it (stream-ordered) when the entry point returns.
struct Workspaces {
  std::vector<std::unique_ptr<KernelScratch>> held;
  WorkspaceAllocator allocator() {
    return [this](size_t bytes) -> void* {
      if (bytes == 0) return nullptr;
      held.push_back(std::make_unique<KernelScratch>(bytes));
      return held.back()->get();
    };
  }
};

static_assert(CUDNN_STATUS_BAD_PARAM == kCudnnStatusBadParam &&
                  CUDNN_STATUS_CATEGORY(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER) == kCudnnStatusBadParam,
              "cudnn_policy.h's BAD_PARAM category is cuDNN's");
static_assert(CUDNN_STATUS_NOT_SUPPORTED == kCudnnStatusNotSupported &&
                  CUDNN_STATUS_CATEGORY(CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT) ==
                      kCudnnStatusNotSupported,
              "cudnn_policy.h's NOT_SUPPORTED category is cuDNN's");

void check(cudnnStatus_t status, const char* call) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuDNN convolution: ") + call + " failed: " + cudnnGetErrorString(status));
  }
}

int to_int(int64_t v, const char* op, const char* what) {
  if (v > INT_MAX) {
    throw std::invalid_argument(std::string(op) + ": " + what + " " + std::to_string(v) + " exceeds cuDNN's int range");
  }
  return static_cast<int>(v);
}

// One handle per (thread, device), like the cuBLAS handles in blas.cc: a handle must not be used
// by two threads at once and belongs to the device current at creation. A thread's handles go
// back to a pool when it exits, for the next thread to take; none is destroyed (handle_pool.h).
struct CudnnHandle {
  cudnnHandle_t handle = nullptr;
};

std::unique_ptr<CudnnHandle> make_handle(int) {
  auto h = std::make_unique<CudnnHandle>();
  check(cudnnCreate(&h->handle), "cudnnCreate");
  return h;
}

cudnnHandle_t handle_for_current_device(int* device_out) {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cuDNN convolution: cudaGetDevice");
  static auto* pool = new HandlePool<CudnnHandle>;  // never freed: threads may exit after static destructors
  thread_local HandlePool<CudnnHandle>::Lease lease(*pool);
  *device_out = device;
  return lease.get(device, make_handle).handle;
}

cudnnDataType_t data_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return CUDNN_DATA_FLOAT;
    case DType::Float64: return CUDNN_DATA_DOUBLE;
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
    default:
      throw std::invalid_argument(std::string("cuDNN convolution: CUDA convolution supports float32, float64, float16 and "
                                              "bfloat16, got ") + dtype_name(dtype));
  }
}

// The math type a candidate runs with (backend_flags.h: float32 never down-converts to float16 and
// uses TF32 only when cudnn_allow_tf32(); the 16-bit types use tensor cores).
cudnnMathType_t math_type(DType dtype, cudnnMathType_t rated) {
  return static_cast<cudnnMathType_t>(
      conv_math(dtype, static_cast<ConvMath>(static_cast<int>(rated)), cudnn_allow_tf32()));
}

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() { check(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor"); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc() { check(cudnnCreateFilterDescriptor(&d), "cudnnCreateFilterDescriptor"); }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};

struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc() { check(cudnnCreateConvolutionDescriptor(&d), "cudnnCreateConvolutionDescriptor"); }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

// One convolution's shapes as cuDNN's Nd descriptors take them, for a 2-D (Conv2dGeometry) and a
// 3-D (Conv3dGeometry) convolution alike: `spatial` sizes after batch and channels, each array
// contiguous (NCHW, NCDHW).
struct ConvShape {
  const char* op = "conv2d";  // names the convolution in errors
  int spatial = 2;
  int64_t batch = 1, in_channels = 1, out_channels = 1, groups = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t pad[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};

  // Every number that tells one convolution from another (the algorithm cache's key).
  std::vector<int64_t> key() const {
    std::vector<int64_t> k = {spatial, batch, in_channels, out_channels, groups};
    for (const int64_t* a : {in, out, kernel, pad, stride, dilation}) k.insert(k.end(), a, a + spatial);
    return k;
  }
};

ConvShape shape_of(const Conv2dGeometry& g) {
  ConvShape s;
  s.op = "conv2d";
  s.spatial = 2;
  s.batch = g.batch;
  s.in_channels = g.in_channels;
  s.out_channels = g.out_channels;
  s.groups = g.groups;
  const int64_t in[] = {g.in_h, g.in_w}, out[] = {g.out_h, g.out_w}, kernel[] = {g.kernel_h, g.kernel_w};
  const int64_t pad[] = {g.pad_h, g.pad_w}, stride[] = {g.stride_h, g.stride_w};
  const int64_t dilation[] = {g.dilation_h, g.dilation_w};
  for (int i = 0; i < 2; ++i) {
    s.in[i] = in[i];
    s.out[i] = out[i];
    s.kernel[i] = kernel[i];
    s.pad[i] = pad[i];
    s.stride[i] = stride[i];
    s.dilation[i] = dilation[i];
  }
  return s;
}

ConvShape shape_of(const Conv3dGeometry& g) {
  ConvShape s;
  s.op = "conv3d";
  s.spatial = 3;
  s.batch = g.batch;
  s.in_channels = g.in_channels;
  s.out_channels = g.out_channels;
  s.groups = g.groups;
  const int64_t in[] = {g.in_d, g.in_h, g.in_w}, out[] = {g.out_d, g.out_h, g.out_w};
  const int64_t kernel[] = {g.kernel_d, g.kernel_h, g.kernel_w}, pad[] = {g.pad_d, g.pad_h, g.pad_w};
  const int64_t stride[] = {g.stride_d, g.stride_h, g.stride_w};
  const int64_t dilation[] = {g.dilation_d, g.dilation_h, g.dilation_w};
  for (int i = 0; i < 3; ++i) {
    s.in[i] = in[i];
    s.out[i] = out[i];
    s.kernel[i] = kernel[i];
    s.pad[i] = pad[i];
    s.stride[i] = stride[i];
    s.dilation[i] = dilation[i];
  }
  return s;
}

// The descriptors of one convolution call (cheap to build; cuDNN keeps no pointer to them): the
// Nd forms with 4 or 5 dims, which describe a 2-D convolution as the 4-d forms do.
struct Descriptors {
  TensorDesc x, y, bias;
  FilterDesc w;
  ConvDesc conv;

  Descriptors(DType dtype, const ConvShape& s) {
    const cudnnDataType_t type = data_type(dtype);
    const cudnnDataType_t compute = dtype == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    const int n = s.spatial + 2;
    int xd[5], yd[5], bd[5], wd[5], pad[3], stride[3], dilation[3];
    xd[0] = yd[0] = to_int(s.batch, s.op, "batch");
    xd[1] = to_int(s.in_channels, s.op, "channels");
    yd[1] = wd[0] = bd[1] = to_int(s.out_channels, s.op, "channels");
    wd[1] = to_int(s.in_channels / s.groups, s.op, "channels");
    bd[0] = 1;
    for (int i = 0; i < s.spatial; ++i) {
      xd[i + 2] = to_int(s.in[i], s.op, "size");
      yd[i + 2] = to_int(s.out[i], s.op, "size");
      wd[i + 2] = to_int(s.kernel[i], s.op, "kernel");
      bd[i + 2] = 1;
      pad[i] = to_int(s.pad[i], s.op, "padding");
      stride[i] = to_int(s.stride[i], s.op, "stride");
      dilation[i] = to_int(s.dilation[i], s.op, "dilation");
    }
    check(cudnnSetTensorNdDescriptorEx(x.d, CUDNN_TENSOR_NCHW, type, n, xd), "cudnnSetTensorNdDescriptorEx");
    check(cudnnSetTensorNdDescriptorEx(y.d, CUDNN_TENSOR_NCHW, type, n, yd), "cudnnSetTensorNdDescriptorEx");
    check(cudnnSetTensorNdDescriptorEx(bias.d, CUDNN_TENSOR_NCHW, type, n, bd), "cudnnSetTensorNdDescriptorEx");
    check(cudnnSetFilterNdDescriptor(w.d, type, CUDNN_TENSOR_NCHW, n, wd), "cudnnSetFilterNdDescriptor");
    check(cudnnSetConvolutionNdDescriptor(conv.d, s.spatial, pad, stride, dilation, CUDNN_CROSS_CORRELATION, compute),
          "cudnnSetConvolutionNdDescriptor");
    check(cudnnSetConvolutionGroupCount(conv.d, to_int(s.groups, s.op, "groups")), "cudnnSetConvolutionGroupCount");
    check(cudnnSetConvolutionMathType(conv.d, math_type(dtype, CUDNN_DEFAULT_MATH)), "cudnnSetConvolutionMathType");
  }
};

// ---------- the per-shape algorithm cache ----------

enum class Pass { Forward, BackwardData, BackwardFilter };

// A candidate: one of the three cuDNN algorithm enums and a cudnnMathType_t, stored as int.
using Candidate = ConvCandidate;
using CacheKey = ConvAlgoKey;

// The switches are part of the key: turning one on or off chooses again instead of reusing a choice
// made under the other setting.
CacheKey cache_key(Pass pass, DType dtype, int device, const ConvShape& s) {
  CacheKey key = {static_cast<int64_t>(pass), static_cast<int64_t>(dtype), device, cudnn_allow_tf32(),
                  cudnn_deterministic(), cudnn_benchmark()};
  const std::vector<int64_t> shape = s.key();
  key.insert(key.end(), shape.begin(), shape.end());
  return key;
}

std::mutex cache_mutex;
ConvAlgoCache& cache() {
  static auto* c = new ConvAlgoCache();  // leaked: used until exit
  return *c;
}

// The usable candidates among cuDNN's `n` results, in cuDNN's order: those that report success,
// are deterministic when cudnn_deterministic() asks for it, and whose workspace size cuDNN can
// state for the math type our policy gives them.
template <typename Perf, typename GetWorkspace>
std::vector<Candidate> usable(DType dtype, Descriptors& d, const Perf* perf, int n, GetWorkspace get_workspace) {
  std::vector<Candidate> out;
  for (int i = 0; i < n; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (cudnn_deterministic() && perf[i].determinism != CUDNN_DETERMINISTIC) continue;
    const cudnnMathType_t math = math_type(dtype, perf[i].mathType);
    bool seen = false;  // cuDNN lists an algorithm once per math type; the policy may merge them
    for (const Candidate& c : out)
      seen = seen || (c.algo == static_cast<int>(perf[i].algo) && c.math == static_cast<int>(math));
    if (seen) continue;
    check(cudnnSetConvolutionMathType(d.conv.d, math), "cudnnSetConvolutionMathType");
    size_t bytes = 0;
    if (get_workspace(perf[i].algo, &bytes) != CUDNN_STATUS_SUCCESS) continue;
    out.push_back({static_cast<int>(perf[i].algo), static_cast<int>(math), bytes});
  }
  return out;
}

// cuDNN's heuristic ranking (no trial runs, so no allocation and no synchronization); in benchmark
// mode, cuDNN then times every usable algorithm on the call's own buffers (overwriting the output,
// which the real run writes again) with a workspace as large as the hungriest one needs, and the
// candidates follow the measured order. Measuring waits for the device: once per shape.
template <typename Perf, typename GetCount, typename GetRanked, typename Find, typename GetWorkspace>
std::vector<Candidate> choose(DType dtype, Descriptors& d, GetCount get_count, GetRanked get_ranked, Find find,
                              GetWorkspace get_workspace, const WorkspaceAllocator& workspace, const char* what,
                              const char* find_what) {
  int count = 0;
  check(get_count(&count), what);
  std::vector<Perf> perf(count > 0 ? count : 1);
  int returned = 0;
  check(get_ranked(static_cast<int>(perf.size()), &returned, perf.data()), what);
  std::vector<Candidate> out = usable(dtype, d, perf.data(), returned, get_workspace);
  if (cudnn_benchmark() && !out.empty()) {
    size_t most = 0;
    for (const Candidate& c : out) most = std::max(most, c.workspace);
    void* ws = nullptr;
    try {
      ws = workspace(most);
    } catch (const std::exception&) {  // no memory for the hungriest: measure those that need none
      most = 0;
    }
    int measured = 0;
    // A capture meets this for a shape no eager step ran: the warm-up steps are what fill the cache.
    count_host_sync("cuDNN benchmark-mode trials for a convolution shape not seen before");
    check(find(static_cast<int>(perf.size()), &measured, perf.data(), ws, most), find_what);
    std::vector<Candidate> timed = usable(dtype, d, perf.data(), measured, get_workspace);
    if (!timed.empty()) out = timed;
  }
  if (out.empty()) {
    throw std::runtime_error(std::string("cuDNN convolution: cuDNN offers no ") +
                             (cudnn_deterministic() ? "deterministic " : "") + "algorithm for this shape (" + what +
                             ")");
  }
  return out;
}

// The operands of one convolution call, for benchmark mode's trial runs.
struct Operands {
  const void* x;
  const void* w;
  const void* y;  // the output of the forward pass, the incoming gradient of the backward ones
  void* out;      // y, grad_x or grad_w: what the pass writes
};

std::vector<Candidate> candidates(Pass pass, DType dtype, int device, const ConvShape& g, cudnnHandle_t h,
                                  Descriptors& d, const Operands& o, const WorkspaceAllocator& workspace) {
  const CacheKey key = cache_key(pass, dtype, device, g);
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    auto it = cache().find(key);
    if (it != cache().end()) return it->second;
  }
  std::vector<Candidate> ranked;
  switch (pass) {
    case Pass::Forward:
      ranked = choose<cudnnConvolutionFwdAlgoPerf_t>(
          dtype, d, [&](int* n) { return cudnnGetConvolutionForwardAlgorithmMaxCount(h, n); },
          [&](int req, int* ret, cudnnConvolutionFwdAlgoPerf_t* p) {
            return cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.d, d.w.d, d.conv.d, d.y.d, req, ret, p);
          },
          [&](int req, int* ret, cudnnConvolutionFwdAlgoPerf_t* p, void* ws, size_t bytes) {
            return cudnnFindConvolutionForwardAlgorithmEx(h, d.x.d, o.x, d.w.d, o.w, d.conv.d, d.y.d, o.out, req, ret,
                                                          p, ws, bytes);
          },
          [&](cudnnConvolutionFwdAlgo_t a, size_t* bytes) {
            return cudnnGetConvolutionForwardWorkspaceSize(h, d.x.d, d.w.d, d.conv.d, d.y.d, a, bytes);
          },
          workspace, "cudnnGetConvolutionForwardAlgorithm_v7", "cudnnFindConvolutionForwardAlgorithmEx");
      break;
    case Pass::BackwardData:
      ranked = choose<cudnnConvolutionBwdDataAlgoPerf_t>(
          dtype, d, [&](int* n) { return cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, n); },
          [&](int req, int* ret, cudnnConvolutionBwdDataAlgoPerf_t* p) {
            return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.d, d.y.d, d.conv.d, d.x.d, req, ret, p);
          },
          [&](int req, int* ret, cudnnConvolutionBwdDataAlgoPerf_t* p, void* ws, size_t bytes) {
            return cudnnFindConvolutionBackwardDataAlgorithmEx(h, d.w.d, o.w, d.y.d, o.y, d.conv.d, d.x.d, o.out, req,
                                                               ret, p, ws, bytes);
          },
          [&](cudnnConvolutionBwdDataAlgo_t a, size_t* bytes) {
            return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w.d, d.y.d, d.conv.d, d.x.d, a, bytes);
          },
          workspace, "cudnnGetConvolutionBackwardDataAlgorithm_v7", "cudnnFindConvolutionBackwardDataAlgorithmEx");
      break;
    case Pass::BackwardFilter:
      ranked = choose<cudnnConvolutionBwdFilterAlgoPerf_t>(
          dtype, d, [&](int* n) { return cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, n); },
          [&](int req, int* ret, cudnnConvolutionBwdFilterAlgoPerf_t* p) {
            return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x.d, d.y.d, d.conv.d, d.w.d, req, ret, p);
          },
          [&](int req, int* ret, cudnnConvolutionBwdFilterAlgoPerf_t* p, void* ws, size_t bytes) {
            return cudnnFindConvolutionBackwardFilterAlgorithmEx(h, d.x.d, o.x, d.y.d, o.y, d.conv.d, d.w.d, o.out,
                                                                 req, ret, p, ws, bytes);
          },
          [&](cudnnConvolutionBwdFilterAlgo_t a, size_t* bytes) {
            return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x.d, d.y.d, d.conv.d, d.w.d, a, bytes);
          },
          workspace, "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
          "cudnnFindConvolutionBackwardFilterAlgorithmEx");
      break;
  }
  std::lock_guard<std::mutex> lock(cache_mutex);
  cache()[key] = ranked;
  return ranked;
}

// Runs `pass` with the best-ranked candidate whose workspace can be allocated and that cuDNN
// accepts. One cuDNN cannot run for this shape (any NOT_SUPPORTED sub-code) is dropped from the
// cache so later calls skip it; one that does not suit this call's operands (BAD_PARAM, e.g. a
// misaligned pointer) is skipped this time only; any other error ends the search.
template <typename Run>
void run_pass(Pass pass, DType dtype, const ConvShape& g, cudnnHandle_t h, int device, Descriptors& d,
              const Operands& o, const WorkspaceAllocator& workspace, const Run& run, const char* what) {
  std::vector<Candidate> list = candidates(pass, dtype, device, g, h, d, o, workspace);
  std::string last_error;
  for (const Candidate& c : list) {
    void* ws = nullptr;
    try {
      ws = workspace(c.workspace);
    } catch (const std::exception& e) {  // out of memory for this one: a leaner candidate may fit
      last_error = e.what();
      continue;
    }
    check(cudnnSetConvolutionMathType(d.conv.d, static_cast<cudnnMathType_t>(c.math)), "cudnnSetConvolutionMathType");
    cudnnStatus_t status = run(c.algo, ws, c.workspace);
    if (status == CUDNN_STATUS_SUCCESS) {
      after_launch(pass == Pass::Forward ? g.op : "convolution backward");
      return;
    }
    last_error = cudnnGetErrorString(status);
    const ConvFailure failure = classify_conv_failure(status);
    if (failure == ConvFailure::kFatal) break;
    if (failure == ConvFailure::kUnsupported) {
      std::lock_guard<std::mutex> lock(cache_mutex);
      forget_candidate(cache(), cache_key(pass, dtype, device, g), c.algo, c.math);
    }
  }
  throw std::runtime_error(std::string(g.op) + ": " + what + " failed for every cuDNN algorithm: " + last_error);
}

// alpha and beta are float for every data type but double (cuDNN's rule for these scaling factors).
struct Scale {
  float f;
  double d;
  const void* ptr(DType dtype) const { return dtype == DType::Float64 ? static_cast<const void*>(&d) : &f; }
};
const Scale kOne{1.0f, 1.0}, kZero{0.0f, 0.0};

// The forward of a 2-D or 3-D convolution (Geometry: Conv2dGeometry or Conv3dGeometry).
template <typename Geometry>
void conv_forward(DType dtype, const Geometry& geometry, const void* x, const void* w, const void* bias, void* y,
                  void* stream, const WorkspaceAllocator& workspace) {
  int device = 0;
  cudnnHandle_t h = handle_for_current_device(&device);
  check(cudnnSetStream(h, static_cast<cudaStream_t>(stream)), "cudnnSetStream");
  check_cudnn_element_limit(geometry);
  const ConvShape g = shape_of(geometry);
  Descriptors d(dtype, g);
  run_pass(
      Pass::Forward, dtype, g, h, device, d, Operands{x, w, nullptr, y}, workspace,
      [&](int algo, void* ws, size_t bytes) {
        return cudnnConvolutionForward(h, kOne.ptr(dtype), d.x.d, x, d.w.d, w, d.conv.d,
                                       static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws, bytes, kZero.ptr(dtype),
                                       d.y.d, y);
      },
      "cudnnConvolutionForward");
  if (bias != nullptr) {
    check(cudnnAddTensor(h, kOne.ptr(dtype), d.bias.d, bias, kOne.ptr(dtype), d.y.d, y), "cudnnAddTensor");
    after_launch("convolution (bias)");
  }
}

// Its gradients, as Conv2dBackward / Conv3dBackward say.
template <typename Geometry>
void conv_backward(DType dtype, const Geometry& geometry, const void* grad_y, const void* x, const void* w,
                   void* grad_x, void* grad_w, void* grad_b, void* stream, const WorkspaceAllocator& workspace) {
  int device = 0;
  cudnnHandle_t h = handle_for_current_device(&device);
  check(cudnnSetStream(h, static_cast<cudaStream_t>(stream)), "cudnnSetStream");
  check_cudnn_element_limit(geometry);
  const ConvShape g = shape_of(geometry);
  Descriptors d(dtype, g);
  if (grad_x != nullptr) {
    run_pass(
        Pass::BackwardData, dtype, g, h, device, d, Operands{x, w, grad_y, grad_x}, workspace,
        [&](int algo, void* ws, size_t bytes) {
          return cudnnConvolutionBackwardData(h, kOne.ptr(dtype), d.w.d, w, d.y.d, grad_y, d.conv.d,
                                              static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws, bytes,
                                              kZero.ptr(dtype), d.x.d, grad_x);
        },
        "cudnnConvolutionBackwardData");
  }
  if (grad_w != nullptr) {
    run_pass(
        Pass::BackwardFilter, dtype, g, h, device, d, Operands{x, w, grad_y, grad_w}, workspace,
        [&](int algo, void* ws, size_t bytes) {
          return cudnnConvolutionBackwardFilter(h, kOne.ptr(dtype), d.x.d, x, d.y.d, grad_y, d.conv.d,
                                                static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), ws, bytes,
                                                kZero.ptr(dtype), d.w.d, grad_w);
        },
        "cudnnConvolutionBackwardFilter");
  }
  if (grad_b != nullptr) {
    check(cudnnConvolutionBackwardBias(h, kOne.ptr(dtype), d.y.d, grad_y, kZero.ptr(dtype), d.bias.d, grad_b),
          "cudnnConvolutionBackwardBias");
    after_launch("convolution backward (bias)");
  }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void Conv2dForward::cuda(DType dtype, const Conv2dGeometry& g, const void* x, const void* w, const void* bias, void* y,
                         void* stream) {
  cuda::Workspaces ws;
  cuda::conv_forward(dtype, g, x, w, bias, y, stream, ws.allocator());
}

void Conv2dBackward::cuda(DType dtype, const Conv2dGeometry& g, const void* grad_y, const void* x, const void* w,
                          void* grad_x, void* grad_w, void* grad_b, void* stream) {
  cuda::Workspaces ws;
  cuda::conv_backward(dtype, g, grad_y, x, w, grad_x, grad_w, grad_b, stream, ws.allocator());
}

void Conv3dForward::cuda(DType dtype, const Conv3dGeometry& g, const void* x, const void* w, const void* bias, void* y,
                         void* stream) {
  cuda::Workspaces ws;
  cuda::conv_forward(dtype, g, x, w, bias, y, stream, ws.allocator());
}

void Conv3dBackward::cuda(DType dtype, const Conv3dGeometry& g, const void* grad_y, const void* x, const void* w,
                          void* grad_x, void* grad_w, void* grad_b, void* stream) {
  cuda::Workspaces ws;
  cuda::conv_backward(dtype, g, grad_y, x, w, grad_x, grad_w, grad_b, stream, ws.allocator());
}

}  // namespace colony::kernels
