#include "kernels/common/gemm.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/copy.h"
#include "runtime/cuda/backend_flags.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/handle_pool.h"
#include "runtime/cuda/runtime.h"
#include "runtime/cuda/workspaces.h"

namespace colony::kernels::cuda {
namespace {

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("gemm: ") + call + " failed: " + cublasGetStatusString(status));
  }
}

// One handle per (thread, device): a cuBLAS handle must not be used by two threads at once, and is
// bound to the device that was current when it was created. A thread's handles go back to a pool
// when it exits, for the next thread to take; none is destroyed (handle_pool.h).
struct Handle {
  cublasHandle_t handle = nullptr;
  int device = 0;
  size_t workspace_bytes = 0;
  // One workspace per stream the handle has run on: cuBLAS's own default workspace belongs to the
  // handle, so two streams using it would overlap in time on the same scratch memory, and it is
  // allocated inside the first call, which a CUDA graph capture forbids. Streams live as long as
  // the process (runtime/stream.h), so these are never freed either; they travel with the handle.
  StreamWorkspaces workspaces;
};

std::unique_ptr<Handle> make_handle(int device) {
  int major = 0;
  check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
             "gemm: cudaDeviceGetAttribute");
  auto h = std::make_unique<Handle>();
  h->device = device;
  h->workspace_bytes = cublas_workspace_bytes(std::getenv("CUBLAS_WORKSPACE_CONFIG"), major);
  check(cublasCreate(&h->handle), "cublasCreate");
  // TF32 is chosen per call through the compute type (matmul_allow_tf32); the handle's own mode
  // stays the default so that nothing else turns it on.
  const cublasStatus_t mode = cublasSetMathMode(h->handle, CUBLAS_DEFAULT_MATH);
  if (mode != CUBLAS_STATUS_SUCCESS) cublasDestroy(h->handle);
  check(mode, "cublasSetMathMode");
  return h;
}

Handle& handle_for_current_device() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "gemm: cudaGetDevice");
  static auto* pool = new HandlePool<Handle>;  // never freed: threads may exit after static destructors
  thread_local HandlePool<Handle>::Lease lease(*pool);
  return lease.get(device, make_handle);
}

// Binds `stream` and that stream's workspace to the handle. Without memory for a workspace cuBLAS
// still runs (with algorithms that need none), so an allocation failure is not an error here; the
// caching allocator is asked to give back its cache first, and a later call tries again.
void bind_stream(Handle& h, void* stream) {
  check(cublasSetStream(h.handle, static_cast<cudaStream_t>(stream)), "cublasSetStream");
  void* workspace = h.workspaces.get(stream, h.workspace_bytes, device_malloc,
                                     [&h] { release_cached_memory(h.device); });
  check(cublasSetWorkspace(h.handle, workspace, workspace ? h.workspace_bytes : 0), "cublasSetWorkspace");
}

int to_int(int64_t v, const char* what) {
  if (v > INT_MAX) {
    throw std::invalid_argument(std::string("gemm: ") + what + " " + std::to_string(v) + " exceeds cuBLAS's int range");
  }
  return static_cast<int>(v);
}

}  // namespace

}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void Gemm::cuda(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b,
                void* c, int64_t ldc, int64_t c_batch_stride, double alpha, double beta, void* stream) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  cudaDataType_t type;
  cublasComputeType_t compute;
  switch (dtype) {
    case DType::Float32:
      type = CUDA_R_32F;
      compute = matmul_allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case DType::Float64: type = CUDA_R_64F; compute = CUBLAS_COMPUTE_64F; break;
    case DType::Float16: type = CUDA_R_16F; compute = CUBLAS_COMPUTE_32F; break;
    case DType::BFloat16: type = CUDA_R_16BF; compute = CUBLAS_COMPUTE_32F; break;
    default:
      throw std::invalid_argument(std::string("gemm: CUDA matrix products support float32, float64, float16 and "
                                              "bfloat16, got ") + dtype_name(dtype));
  }
  // Column-major view of row-major C[m, n] is C^T[n, m] = B^T A^T. A row-major operand read as
  // column-major is already the transpose we need (op N); a column-major one needs op T.
  cublasOperation_t op_b = b.col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t op_a = a.col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  int in = to_int(n, "n"), im = to_int(m, "m"), ik = to_int(k, "k");
  int ldb = to_int(b.ld, "ldb"), lda = to_int(a.ld, "lda"), ildc = to_int(ldc, "ldc");
  float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  const void* alpha_p = dtype == DType::Float64 ? static_cast<const void*>(&alpha) : &alpha_f;
  const void* beta_p = dtype == DType::Float64 ? static_cast<const void*>(&beta) : &beta_f;

  Handle& h = handle_for_current_device();
  bind_stream(h, stream);
  cublasHandle_t handle = h.handle;
  if (batch == 1) {
    check(cublasGemmEx(handle, op_b, op_a, in, im, ik, alpha_p, b.data, type, ldb, a.data, type, lda, beta_p, c, type,
                       ildc, compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  } else {
    check(cublasGemmStridedBatchedEx(handle, op_b, op_a, in, im, ik, alpha_p, b.data, type, ldb, b.batch_stride,
                                     a.data, type, lda, a.batch_stride, beta_p, c, type, ildc, c_batch_stride,
                                     to_int(batch, "batch"), compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
  }
  after_launch("matmul");
}

// The bias broadcast into C's rows (a copy from a stride-0 layout, on the same stream), then the
// product added to it by cuBLAS (beta = 1).
void GemmBias::cuda(DType dtype, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b,
                    const void* bias, void* c, int64_t ldc, void* stream) {
  if (m <= 0 || n <= 0) return;
  StridedLayout from, to;
  from.ndim = to.ndim = 2;
  from.sizes[0] = to.sizes[0] = m;
  from.sizes[1] = to.sizes[1] = n;
  from.strides[0] = 0;
  from.strides[1] = 1;
  to.strides[0] = ldc;
  to.strides[1] = 1;
  Copy::cuda(dtype, bias, from, dtype, c, to, stream);
  if (k > 0) Gemm::cuda(dtype, 1, m, n, k, a, b, c, ldc, 0, 1.0, 1.0, stream);
}

}  // namespace colony::kernels
