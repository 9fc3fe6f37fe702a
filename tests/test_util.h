// Towerflow's own test helpers: access to the reference fixtures, and the
// public testing library's Status matchers (testing/status_matchers.h) and
// files (testing/files.h: MakeTempDir, ReadFileOrDie).
//
//   std::string path;
//   TW_SKIP_WITHOUT_REFERENCE(path, "tf/graphs/mnist_partition_graph.pb");
#ifndef TOWERFLOW_TESTS_TEST_UTIL_H_
#define TOWERFLOW_TESTS_TEST_UTIL_H_

#include <optional>
#include <ostream>
#include <string>

#include "gtest/gtest.h"
#include "testing/files.h"  // MakeTempDir, ReadFileOrDie
#include "testing/status_matchers.h"

namespace towerflow {
namespace testing {

// The path of a file of ../shared/reference (e.g. "tf/graphs/x.pbtxt") as a
// test sees it through @towerflow_tf_reference, or nullopt when the fixtures are not on
// this machine.
std::optional<std::string> ReferenceFilePath(const std::string& relative);

}  // namespace testing
}  // namespace towerflow

// Sets `var` to the fixture's path, or skips the test (with the reason) when
// ../shared/reference is not on this machine.
#define TW_SKIP_WITHOUT_REFERENCE(var, relative)                           \
  do {                                                                     \
    auto tw_ref_path_ = ::towerflow::testing::ReferenceFilePath(relative); \
    if (!tw_ref_path_.has_value()) {                                       \
      GTEST_SKIP() << "reference fixture " << (relative)                   \
                   << " is not on this machine (../shared/reference is "   \
                      "absent); skipping";                                 \
    }                                                                      \
    var = *tw_ref_path_;                                                   \
  } while (0)

#endif  // TOWERFLOW_TESTS_TEST_UTIL_H_
