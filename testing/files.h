// Files for tests: a fresh temporary directory per test, and a whole file
// read back.
//
//   const std::string dir = testing::MakeTempDir("checkpoints");
//   ... write into dir ...
//   EXPECT_EQ(testing::ReadFileOrDie(dir + "/log.csv"), "epoch,loss\n0,0.5\n");
#ifndef TOWERFLOW_TESTING_FILES_H_
#define TOWERFLOW_TESTING_FILES_H_

#include <string>

namespace towerflow {
namespace testing {

// A fresh, empty directory `name` under the test's temporary directory
// (Bazel's TEST_TMPDIR, else /tmp): whatever an earlier run left there is
// removed. A directory that cannot be made fails the current test.
std::string MakeTempDir(const std::string& name);

// Reads a whole file; fails the current test (and returns "") when it
// cannot.
std::string ReadFileOrDie(const std::string& path);

}  // namespace testing
}  // namespace towerflow

#endif  // TOWERFLOW_TESTING_FILES_H_
