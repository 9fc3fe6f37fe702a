"""Where a package's repository lies, for macros whose commands name paths."""

def repository_root():
    """The directory of the calling package's repository, from the execroot:
    "." in Towerflow's own workspace, "external/towerflow" in a user's."""
    repo = native.repository_name()
    return "." if repo == "@" else "external/" + repo[1:]
