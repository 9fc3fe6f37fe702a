"""Exposes ../shared/reference (TensorFlow-written fixtures) to tests.

The fixtures come from other public repositories and are never copied into
Towerflow: tests read them in place. This repository rule links each file of
$TOWERFLOW_REFERENCE_DIR, or else of ../shared/reference beside the workspace,
into @towerflow_tf_reference. When neither exists (a user's clone), the filegroups are
empty and the tests that need them skip with a message.
"""

def _link_files(ctx, src, dst):
    """Symlinks the files directly under `src` to `dst`/<name>."""
    if not src.exists:
        return
    for child in src.readdir():
        ctx.symlink(child, dst + "/" + child.basename)

def _link_tree(ctx, src, dst):
    """Symlinks every file under `src`, at any depth, to `dst`/<relative path>."""
    if not src.exists:
        return
    found = ctx.execute(["find", str(src), "-type", "f"])
    root = str(src) + "/"
    for line in found.stdout.splitlines():
        if line.startswith(root):
            ctx.symlink(line, dst + "/" + line[len(root):])

def _tf_reference_impl(ctx):
    workspace_root = ctx.path(Label("//:WORKSPACE")).dirname
    candidates = []
    env_dir = ctx.os.environ.get("TOWERFLOW_REFERENCE_DIR", "")
    if env_dir:
        candidates.append(ctx.path(env_dir))
    candidates.append(workspace_root.dirname.get_child("shared").get_child("reference"))
    found = None
    for c in candidates:
        if c.exists and c.get_child("tf").exists:
            found = c
            break
    if found:
        tf = found.get_child("tf")
        _link_files(ctx, tf.get_child("graphs"), "tf/graphs")
        _link_files(ctx, tf.get_child("events"), "tf/events")
        _link_tree(ctx, tf.get_child("saved_models"), "tf/saved_models")
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

filegroup(
    name = "graphs",
    srcs = glob(["tf/graphs/**"]),
)

filegroup(
    name = "events",
    srcs = glob(["tf/events/**"]),
)

filegroup(
    name = "saved_models",
    srcs = glob(["tf/saved_models/**"]),
)

filegroup(
    name = "all",
    srcs = [":graphs", ":events", ":saved_models"],
)
""")
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)

tf_reference_repository = repository_rule(
    implementation = _tf_reference_impl,
    local = True,
    environ = ["TOWERFLOW_REFERENCE_DIR"],
)
