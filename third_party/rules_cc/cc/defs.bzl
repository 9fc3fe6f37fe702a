"""Offline stand-in for rules_cc: binds the C++ rule names to Bazel's natives.

@bazel_tools//tools/cpp:BUILD loads these names; Debian's bazel-rules-cc 0.0.4
loads `use_cpp_toolchain`, which Bazel 4.2.3 lacks, so it cannot be used.
"""

cc_binary = native.cc_binary
cc_import = native.cc_import
cc_library = native.cc_library
cc_proto_library = native.cc_proto_library
cc_shared_library = getattr(native, "cc_shared_library", None)
cc_test = native.cc_test
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
fdo_prefetch_hints = native.fdo_prefetch_hints
fdo_profile = native.fdo_profile
objc_import = native.objc_import
objc_library = native.objc_library
