// Where ../shared/reference (TensorFlow's own files: graphs, event files,
// SavedModels; shared/reference/tf/README.md) is as a program of this
// project sees it: tests and `bazel run` through the @towerflow_tf_reference
// repository's runfiles, any program through $TOWERFLOW_REFERENCE_DIR. The
// files are read in place, never copied into the project.
//
//   if (std::optional<std::string> path = ReferenceFilePath("tf/graphs/x.pbtxt")) ...
//
// Not test-only: the fuzz programs (fuzz/) seed from these files too.
// Thread-safe.
#ifndef TOWERFLOW_TESTS_REFERENCE_FILES_H_
#define TOWERFLOW_TESTS_REFERENCE_FILES_H_

#include <optional>
#include <string>

namespace towerflow {

// The path of `relative` (a file or directory of ../shared/reference, e.g.
// "tf/graphs/x.pbtxt"): under $TOWERFLOW_REFERENCE_DIR, else under the
// @towerflow_tf_reference runfiles of a test ($TEST_SRCDIR) or of `bazel run`
// ($RUNFILES_DIR). nullopt when it is in none of them (the fixtures are not
// on this machine).
std::optional<std::string> ReferenceFilePath(const std::string& relative);

}  // namespace towerflow

#endif  // TOWERFLOW_TESTS_REFERENCE_FILES_H_
