"""cc_link_only: libraries that dependents link but do not compile against.

Bazel 4.2 keys every C++ compile action on the paths of all the headers its
target can see, the whole transitive set (CppCompileAction.computeKey adds
the declared include sources). A header added anywhere below a target, even
one that nothing includes, recompiles every source of the target and of
everything above it, in each configuration CI builds (docs/BUILD.md).

The kernels are linked by every test and program for their registrations,
not included: cc_link_only passes on its deps' linking (objects, alwayslink,
link flags) and runfiles, and none of their headers. A kernel header added
or removed then recompiles the kernels, not the hundreds of sources linking
them. A source that does include one of the libraries' headers depends on
that library itself.
"""

def _cc_link_only_impl(ctx):
    merged = cc_common.merge_cc_infos(cc_infos = [dep[CcInfo] for dep in ctx.attr.deps])
    runfiles = ctx.runfiles()
    for dep in ctx.attr.deps:
        runfiles = runfiles.merge(dep[DefaultInfo].default_runfiles)
    return [
        CcInfo(linking_context = merged.linking_context),
        DefaultInfo(runfiles = runfiles),
    ]

cc_link_only = rule(
    implementation = _cc_link_only_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
    },
    doc = "Links deps into dependents without exposing their headers.",
)
