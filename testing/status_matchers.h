// gmock matchers and assertions for absl::Status and absl::StatusOr (Debian's
// Abseil ships none). Part of the public testing library (@towerflow//:testing).
//
//   EXPECT_THAT(ReadGraphDef("x"), StatusIs(absl::StatusCode::kNotFound, "x"));
//   EXPECT_THAT(session->Run(...), IsOk());
//   TW_ASSERT_OK(saver.Save(session, path));
//   TW_ASSERT_OK_AND_ASSIGN(GraphDef g, ReadGraphDef(path));
#ifndef TOWERFLOW_TESTING_STATUS_MATCHERS_H_
#define TOWERFLOW_TESTING_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <utility>

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

// Matches an OK Status, or a StatusOr holding a value.
class IsOkMatcher {
 public:
  template <typename T>
  bool MatchAndExplain(const T& value, ::testing::MatchResultListener* listener) const {
    const absl::Status& status = GetStatus(value);
    if (!status.ok()) *listener << "whose status is " << status;
    return status.ok();
  }
  void DescribeTo(std::ostream* os) const { *os << "is OK"; }
  void DescribeNegationTo(std::ostream* os) const { *os << "is not OK"; }
};

inline ::testing::PolymorphicMatcher<IsOkMatcher> IsOk() {
  return ::testing::MakePolymorphicMatcher(IsOkMatcher());
}

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

#endif  // TOWERFLOW_TESTING_STATUS_MATCHERS_H_
