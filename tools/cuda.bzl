"""cuda_library: Colony's own rule for the few files that hold __global__ kernels.

Each .cu file goes through nvcc (in a genrule, one action per file, so two cores can work on two
kernels at once); the objects join an ordinary cc_library with the toolkit as a dependency. Only
kernel files belong here: cuBLAS/cuDNN/NCCL calls are host code and compile faster as .cc.

The target architecture is `--define=cuda_arch=NN` (default 90 in .bazelrc: sm_90 SASS plus
compute_90 PTX, for the H200; PTX lets newer GPUs JIT it).
Without a toolkit, or with --config=cpu, the library is empty and COLONY_WITH_CUDA is undefined.
"""

load("@local_cuda//:defs.bzl", "CUDA_FOUND", "CUDA_HOME")

def if_cuda(if_true, if_false = []):
    """Selects if_true when CUDA is found and not disabled with --config=cpu."""
    if not CUDA_FOUND:
        return if_false
    return select({
        "//tools:cuda_disabled": if_false,
        "//conditions:default": if_true,
    })

def cuda_library(name, srcs, hdrs = [], nvcc_inputs = [], deps = [], copts = [], **kwargs):
    """A cc_library whose srcs are .cu files compiled by nvcc.

    nvcc_inputs: headers from other packages the .cu files include (nvcc sees only declared inputs).
    """
    objects = []
    usage_files = []
    if CUDA_FOUND:
        for src in srcs:
            stem = src.rsplit(".", 1)[0]
            obj = "_%s_nvcc/%s.pic.o" % (name, stem)
            usage = "_%s_nvcc/%s.resource_usage.txt" % (name, stem)
            native.genrule(
                name = "_%s_nvcc_%s" % (name, stem.replace("/", "_")),
                srcs = [src] + hdrs + nvcc_inputs,
                outs = [obj, usage],
                # --resource-usage (ptxas -v) reports each kernel's registers and spills at no extra
                # cost; they go to `usage` (tests/kernels/register_spill_test reads them), and any
                # other line nvcc prints (warnings, errors) still reaches the build log.
                # nvcc names its temporary files after its pid (TMPDIR/tmpxft_<pid>_...); in
                # Bazel's sandbox every action has its own pid namespace, so two nvcc actions at
                # once can get the same pid and overwrite each other's files in a shared /tmp (a
                # clean build, whose other actions come from a cache, failed so with exit 255).
                # Each action therefore gets a temporary folder of its own.
                cmd = " ".join([
                    "nvcc_tmp=$$(mktemp -d) && TMPDIR=$$nvcc_tmp",
                    CUDA_HOME + "/bin/nvcc",
                    "-std=c++17 -O3 --expt-relaxed-constexpr -Xcompiler -fPIC --resource-usage",
                    "-gencode arch=compute_$(cuda_arch),code=[sm_$(cuda_arch),compute_$(cuda_arch)]",
                    "-DCOLONY_WITH_CUDA -I. -I$(GENDIR)",
                    # Colony's headers are found from the workspace root, as in the .cc files.
                    " ".join(copts),
                    "-c $(location %s) -o $(location %s) 2> $(location %s);" % (src, obj, usage),
                    "rc=$$?; rm -rf \"$$nvcc_tmp\";",
                    "grep -v -e '^ptxas info' -e 'bytes stack frame' $(location %s) >&2 || true; exit $$rc" % usage,
                ]),
                tags = ["no-remote"],
            )
            objects.append(obj)
            usage_files.append(usage)
    # ptxas's per-kernel resource usage of every .cu file (empty without CUDA).
    native.filegroup(
        name = name + "_resource_usage",
        srcs = if_cuda(usage_files),
    )
    native.cc_library(
        name = name,
        srcs = if_cuda(objects),
        hdrs = hdrs,
        deps = deps + if_cuda(["@local_cuda//:cuda"]),
        **kwargs
    )
