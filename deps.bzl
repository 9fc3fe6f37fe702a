"""The repositories Towerflow needs, for the WORKSPACE of a project using it.

    local_repository(name = "towerflow", path = "/path/to/towerflow")
    load("@towerflow//:deps.bzl", "towerflow_dependencies")
    towerflow_dependencies()

Towerflow's own WORKSPACE calls it too, so both builds see the same
definitions. The repositories Towerflow owns carry its prefix
(`towerflow_eigen`, `towerflow_openmpi`, `towerflow_cuda`,
`towerflow_tf_reference`), so they never clash with a user's `eigen` or
`cuda`. The three that Bazel's own tool packages load by fixed names
(`rules_cc`, `rules_java`, `remote_coverage_tools`) get Towerflow's offline
shims (third_party/README.md) only when the workspace has not defined them
already: a user with the real rules keeps them.
"""

load("//third_party:tf_reference.bzl", "tf_reference_repository")
load("//third_party/cuda:cuda.bzl", "cuda_headers_repository")

def _towerflow_dir_impl(ctx):
    src = ctx.path(Label("//:WORKSPACE")).dirname
    for part in ctx.attr.subdir.split("/"):
        src = src.get_child(part)
    for child in src.readdir():
        ctx.symlink(child, child.basename)

# A folder of Towerflow's checkout as a repository of its own (the shims);
# local_repository would resolve a relative path against the user's workspace.
_towerflow_dir = repository_rule(
    implementation = _towerflow_dir_impl,
    attrs = {"subdir": attr.string(mandatory = True)},
    local = True,
)

def _define_unless_present(rule, name, **kwargs):
    if not native.existing_rule(name):
        rule(name = name, **kwargs)

def towerflow_dependencies():
    """Defines every repository Towerflow's targets use (see the file's doc)."""
    for shim in ["rules_cc", "rules_java", "remote_coverage_tools"]:
        _define_unless_present(_towerflow_dir, shim, subdir = "third_party/" + shim)

    # Eigen 3.4 headers from Debian's libeigen3-dev.
    _define_unless_present(
        native.new_local_repository,
        "towerflow_eigen",
        build_file = str(Label("//third_party/eigen:eigen.BUILD")),
        path = "/usr/include/eigen3",
    )

    # Open MPI (libopenmpi-dev): the engine of multi-process training
    # (distribute/).
    _define_unless_present(
        native.new_local_repository,
        "towerflow_openmpi",
        build_file = str(Label("//third_party/mpi:openmpi.BUILD")),
        path = "/usr/lib/x86_64-linux-gnu/openmpi",
    )

    # The CUDA toolkit's headers (/usr/local/cuda) for --config=cuda builds;
    # an empty library on machines without the toolkit.
    _define_unless_present(cuda_headers_repository, "towerflow_cuda")

    # TensorFlow-written fixture files for Towerflow's own tests, read in
    # place from ../shared/reference beside Towerflow's checkout when it
    # exists; empty otherwise (those tests then skip with a message).
    _define_unless_present(tf_reference_repository, "towerflow_tf_reference")
