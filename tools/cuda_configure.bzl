"""Repository rule that finds the CUDA toolkit and exposes it as @local_cuda.

It looks at CUDA_HOME, else /usr/local/cuda. When nvcc, cudart, cuBLAS(Lt), cuDNN and NCCL are all
there, @local_cuda//:cuda is a cc_library of their headers and shared libraries, and
@local_cuda//:defs.bzl says CUDA_FOUND = True. Otherwise every target is empty and CUDA_FOUND = False,
so the same tree builds CPU-only.
"""

_REQUIRED = [
    "bin/nvcc",
    "include/cuda_runtime.h",
    "include/cublas_v2.h",
    "include/cublasLt.h",
    "include/cudnn.h",
    "include/nccl.h",
    "lib64/libcudart.so",
    "lib64/libcublas.so",
    "lib64/libcublasLt.so",
    "lib64/libcudnn.so",
    "lib64/libnccl.so",
]

_BUILD_FOUND = """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "cuda",
    hdrs = glob(["include/**/*.h", "include/**/*.hpp", "include/**/*.cuh", "include/**/*.inl",
                 "include/cccl/**"]),
    includes = ["include", "include/cccl"],
    srcs = ["lib64/libcudart.so", "lib64/libcublas.so", "lib64/libcublasLt.so",
            "lib64/libcudnn.so", "lib64/libnccl.so"],
    # The GPU machines ship cuDNN and NCCL elsewhere (LD_LIBRARY_PATH points there); here the
    # toolkit's own copies are found through the rpath.
    linkopts = ["-Wl,-rpath,{home}/lib64", "-ldl", "-lpthread"],
)

filegroup(name = "nvcc", srcs = ["bin/nvcc"])
"""

_BUILD_MISSING = """
package(default_visibility = ["//visibility:public"])
# CUDA toolkit not found ({why}); Colony builds CPU-only.
cc_library(name = "cuda")
filegroup(name = "nvcc", srcs = [])
"""

def _cuda_configure_impl(ctx):
    home = ctx.os.environ.get("CUDA_HOME", "/usr/local/cuda")
    root = ctx.path(home)
    missing = [f for f in _REQUIRED if not ctx.path(home + "/" + f).exists]
    if not root.exists:
        missing = [home]
    if missing:
        ctx.file("BUILD", _BUILD_MISSING.format(why = "missing: " + ", ".join(missing)))
        ctx.file("defs.bzl", "CUDA_FOUND = False\nCUDA_HOME = \"\"\n")
        return
    real = str(ctx.path(home).realpath)
    for d in ["bin", "include", "lib64"]:
        ctx.symlink(real + "/" + d, d)
    ctx.file("BUILD", _BUILD_FOUND.replace("{home}", real))
    ctx.file("defs.bzl", "CUDA_FOUND = True\nCUDA_HOME = \"%s\"\n" % real)

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_HOME"],
    local = True,
)
