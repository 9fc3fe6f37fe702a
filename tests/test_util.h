// Shared test helpers: Status matchers and access to reference fixtures.
//
//   EXPECT_THAT(ReadGraphDef("x"), StatusIs(absl::StatusCode::kNotFound, "x"));
//   TW_ASSERT_OK_AND_ASSIGN(GraphDef g, ReadGraphDef(path));
//   std::string path;
//   TW_SKIP_WITHOUT_REFERENCE(path, "tf/graphs/mnist_partition_graph.pb");
//
// Debian's Abseil has no status matchers, so they are defined here, once.
#ifndef TOWERFLOW_TESTS_TEST_UTIL_H_
#define TOWERFLOW_TESTS_TEST_UTIL_H_

#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace towerflow {
namespace testing {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// Matches a Status or StatusOr whose code is `code` and whose message
// contains `substr`.
class StatusIsMatcher {
 public:
  StatusIsMatcher(absl::StatusCode code, std::string substr)
      : code_(code), substr_(std::move(substr)) {}

  template <typename T>
  bool MatchAndExplain(const T& value, ::testing::MatchResultListener* listener) const {
    const absl::Status& status = GetStatus(value);
    *listener << "whose status is " << status;
    return status.code() == code_ && status.message().find(substr_) != absl::string_view::npos;
  }
  void DescribeTo(std::ostream* os) const {
    *os << "has code " << absl::StatusCodeToString(code_) << " and a message containing \""
        << substr_ << "\"";
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "does not have code " << absl::StatusCodeToString(code_)
        << " with a message containing \"" << substr_ << "\"";
  }

 private:
  absl::StatusCode code_;
  std::string substr_;
};

inline ::testing::PolymorphicMatcher<StatusIsMatcher> StatusIs(absl::StatusCode code,
                                                               std::string substr = "") {
  return ::testing::MakePolymorphicMatcher(StatusIsMatcher(code, std::move(substr)));
}

// The path of a file of ../shared/reference (e.g. "tf/graphs/x.pbtxt") as a
// test sees it through @tf_reference, or nullopt when the fixtures are not on
// this machine.
std::optional<std::string> ReferenceFilePath(const std::string& relative);

// A fresh, empty directory under the test's temporary directory.
std::string MakeTempDir(const std::string& name);

// Reads a whole file; fails the current test when it cannot.
std::string ReadFileOrDie(const std::string& path);

}  // namespace testing
}  // namespace towerflow

#define TW_EXPECT_OK(expr) EXPECT_EQ(::towerflow::testing::GetStatus(expr), ::absl::OkStatus())
#define TW_ASSERT_OK(expr) ASSERT_EQ(::towerflow::testing::GetStatus(expr), ::absl::OkStatus())

#define TW_TEST_CONCAT_INNER_(a, b) a##b
#define TW_TEST_CONCAT_(a, b) TW_TEST_CONCAT_INNER_(a, b)
#define TW_ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                     \
  auto TW_TEST_CONCAT_(tw_test_so_, __LINE__) = (rexpr);                        \
  ASSERT_EQ(TW_TEST_CONCAT_(tw_test_so_, __LINE__).status(), absl::OkStatus()); \
  lhs = std::move(TW_TEST_CONCAT_(tw_test_so_, __LINE__)).value()

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
