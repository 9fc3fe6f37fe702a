"""tw_cuda_library: CUDA sources compiled by nvcc, under --config=cuda only.

Each `.cu.cc` source becomes an object file through a genrule running
/usr/local/cuda/bin/nvcc for sm_80 and sm_90 (with PTX for newer GPUs); the
objects form a cc_library. In the default (CPU-only) build the library is
empty and nvcc never runs. Keep .cu.cc files to kernels and plain launch
functions: they see only the CUDA toolkit and the headers listed in `hdrs`.
"""

load("//third_party:repository.bzl", "repository_root")

NVCC = "/usr/local/cuda/bin/nvcc"

# TOWERFLOW_CUDA for C++ sources with CUDA-only parts (tests); local to the
# target that names it, so nothing else recompiles under --config=cuda.
CUDA_COPTS = select({
    "//:using_cuda": ["-DTOWERFLOW_CUDA=1"],
    "//conditions:default": [],
})

ARCHS = ["80", "90"]

def tw_cuda_library(name, srcs, hdrs = [], deps = [], device_hdrs = [], testonly = 0):
    """`device_hdrs`: headers of other packages the CUDA sources include."""
    objects = []
    for src in srcs:
        obj = "_%s_%s" % (name, src.replace("/", "_").replace(".cu.cc", ".o"))
        gencode = " ".join(["-gencode arch=compute_%s,code=sm_%s" % (a, a) for a in ARCHS])
        gencode += " -gencode arch=compute_%s,code=compute_%s" % (ARCHS[-1], ARCHS[-1])
        native.genrule(
            name = obj + "_nvcc",
            srcs = [src] + hdrs + device_hdrs,
            outs = [obj],
            cmd = "%s -std=c++17 -O3 -Xcompiler -fPIC %s -I%s -x cu -c $(location %s) -o $@" % (
                NVCC,
                gencode,
                repository_root(),
                src,
            ),
            # Built only when a --config=cuda target depends on it.
            tags = ["manual"],
            testonly = testonly,
        )
        objects.append(":" + obj)
    native.cc_library(
        name = name,
        srcs = select({
            "//:using_cuda": objects,
            "//conditions:default": [],
        }),
        hdrs = hdrs,
        deps = select({
            "//:using_cuda": deps + ["//third_party/cuda:cudart"],
            "//conditions:default": [],
        }),
        testonly = testonly,
    )

def _cuda_headers_impl(ctx):
    include = ctx.path("/usr/local/cuda/include")
    if include.exists:
        ctx.symlink(include, "include")
    ctx.file("BUILD", """
# The CUDA toolkit's headers from /usr/local/cuda/include; empty when the
# toolkit is absent (CPU-only machines, where nothing selects it).
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "headers",
    hdrs = glob(["include/**"]),  # cccl headers such as nv/target have no extension
    includes = ["include"],
)
""")

cuda_headers_repository = repository_rule(
    implementation = _cuda_headers_impl,
    local = True,
)
