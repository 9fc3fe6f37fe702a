#include "distribute/cluster_spec.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace distribute {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ClusterSpecTest, ParsesTfJsonAndRanksFollowTheSpecsOrder) {
  TW_ASSERT_OK_AND_ASSIGN(
      ClusterSpec spec,
      ClusterSpec::Parse(R"( {"ps": ["h0:2222"], "worker": ["h1:2222", "h2:2222"]} )"));
  EXPECT_THAT(spec.jobs(), ElementsAre("ps", "worker"));
  EXPECT_EQ(spec.num_tasks("ps"), 1);
  EXPECT_EQ(spec.num_tasks("worker"), 2);
  EXPECT_EQ(spec.num_tasks("chief"), 0);
  EXPECT_EQ(spec.num_tasks(), 3);
  EXPECT_THAT(spec.addresses("worker"), ElementsAre("h1:2222", "h2:2222"));
  TW_ASSERT_OK_AND_ASSIGN(TaskId t0, spec.TaskOfRank(0));
  TW_ASSERT_OK_AND_ASSIGN(TaskId t2, spec.TaskOfRank(2));
  EXPECT_EQ(t0.name(), "/job:ps/replica:0/task:0");
  EXPECT_EQ(t2.name(), "/job:worker/replica:0/task:1");
  EXPECT_EQ(spec.RankOf({"worker", 1}), 2);
  EXPECT_EQ(spec.RankOf({"worker", 2}), -1);
  EXPECT_EQ(spec.RankOf({"evaluator", 0}), -1);
  EXPECT_EQ(spec.DebugString(), "ps=1,worker=2");
}

TEST(ClusterSpecTest, ParsesCounts) {
  TW_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ClusterSpec::Parse("worker=2, ps=3"));
  EXPECT_THAT(spec.jobs(), ElementsAre("worker", "ps"));
  TW_ASSERT_OK_AND_ASSIGN(TaskId t, spec.TaskOfRank(4));
  EXPECT_EQ(t.name(), "/job:ps/replica:0/task:2");
  EXPECT_THAT(spec.TaskOfRank(5).status().message(), HasSubstr("process 5 has no task"));
  TW_ASSERT_OK_AND_ASSIGN(ClusterSpec same, ClusterSpec::FromCounts({{"worker", 2}, {"ps", 3}}));
  EXPECT_EQ(same.DebugString(), "worker=2,ps=3");
}

TEST(ClusterSpecTest, RejectsBadSpecsNamingTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "has no jobs"},
      {"ps=0", "job 'ps' has 0 tasks"},
      {"ps=1,ps=2", "job 'ps' is given twice"},
      {"ps=x", "is not job=<number of tasks>"},
      {"ps=-1", "is not job=<number of tasks>"},
      {"1ps=1", "bad job name '1ps'"},
      {R"({"ps": ["a"], "worker": []})", "job 'worker' has 0 tasks"},
      {R"({"ps": ["a"})", "expected ']'"},
      {R"({"ps": ["a\"b"]})", "escapes are not supported"},
      {R"({"ps": ["a"]} x)", "text after the object"},
      {R"({})", "no jobs"},
  };
  for (const auto& [text, message] : cases) {
    absl::StatusOr<ClusterSpec> spec = ClusterSpec::Parse(text);
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(spec.status().message(), HasSubstr(message)) << text;
  }
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow
