"""tw_proto_library: C++ code from .proto files with the system `protoc`.

Bazel's native cc_proto_library needs the protobuf source repository, which
cannot be fetched offline. This macro runs Debian's protoc in a genrule and
wraps the generated .pb.cc/.pb.h files in a cc_library linked to -lprotobuf.
Imports are resolved from the repository's root, so a .proto imports its
siblings as "proto/foo.proto", in Towerflow's workspace and in a user's.
"""

load("//third_party:repository.bzl", "repository_root")

def tw_proto_library(name, srcs, deps = [], visibility = None):
    """Declares `name`, a cc_library of the messages in `srcs`.

    Args:
      name: the cc_library's name.
      srcs: .proto files in this package.
      deps: other tw_proto_library targets whose .proto files `srcs` import.
      visibility: Bazel visibility of the cc_library.
    """
    stems = [s[:-len(".proto")] for s in srcs]
    hdrs = [s + ".pb.h" for s in stems]
    ccs = [s + ".pb.cc" for s in stems]
    pkg = native.package_name()

    # Inside another workspace Towerflow's files sit under external/towerflow
    # (of the sources and of the output directory).
    root = repository_root()
    native.genrule(
        name = name + "_genproto",
        srcs = srcs + [d + "_srcs" for d in deps],
        outs = hdrs + ccs,
        cmd = "protoc -I%s --cpp_out=$(GENDIR)/%s " % (root, root) +
              " ".join([root + "/" + pkg + "/" + s for s in srcs]),
        message = "protoc " + name,
    )
    native.filegroup(
        name = name + "_srcs",
        srcs = srcs + [d + "_srcs" for d in deps],
        visibility = visibility,
    )
    native.cc_library(
        name = name,
        srcs = ccs,
        hdrs = hdrs,
        deps = deps + ["//third_party:protobuf"],
        visibility = visibility,
    )
