// NcclAllReduce across virtual CPU devices: each reduction, the one shared
// result, repeated steps, and the errors that would otherwise hang a step.
#include <cmath>
#include <string>
#include <vector>

#include "core/tensor_proto_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nccl_ops.h"
#include "runtime/client_session.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;

SessionOptions Cpus(int n) {
  SessionOptions options;
  options.device_count["CPU"] = n;
  return options;
}

Scope OnCpu(const Scope& s, int i) { return s.WithDevice("/cpu:" + std::to_string(i)); }

// One NcclAllReduce per input, input i's on CPU:i.
std::vector<Output> AllReduce(const Scope& root, const std::vector<Output>& inputs,
                              const std::string& reduction, const std::string& shared_name) {
  std::vector<Output> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    out.push_back(ops::NcclAllReduce(OnCpu(root, static_cast<int>(i)), inputs[i], reduction,
                                     static_cast<int64_t>(inputs.size()), shared_name));
  }
  return out;
}

template <typename T>
std::vector<Output> Consts(const Scope& root, const TensorShape& shape,
                           const std::vector<std::vector<T>>& values) {
  std::vector<Output> out;
  for (size_t i = 0; i < values.size(); ++i) {
    out.push_back(ops::Const(OnCpu(root, static_cast<int>(i)),
                             MakeTensorProto<T>(absl::MakeConstSpan(values[i]), shape)));
  }
  return out;
}

TEST(NcclAllReduceCpuTest, EachReductionOverThreeDevices) {
  // Inputs [1, -1, 2], [3, -2, 4], [2, 1, 6].
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {
      {"sum", {6, -2, 12}}, {"prod", {6, 2, 48}}, {"min", {1, -2, 2}}, {"max", {3, 1, 6}}};
  for (const auto& [reduction, expected] : cases) {
    Scope root = Scope::NewRootScope();
    std::vector<Output> out = AllReduce(
        root, Consts<float>(root, {3}, {{1, -1, 2}, {3, -2, 4}, {2, 1, 6}}), reduction, "r");
    TW_ASSERT_OK(root.status());
    ClientSession session(root, Cpus(3));
    std::vector<Tensor> got;
    TW_ASSERT_OK(session.Run(out, &got));
    ASSERT_EQ(got.size(), 3u);
    for (const Tensor& t : got) EXPECT_THAT(t, TensorIs<float>({3}, expected)) << reduction;
  }
}

TEST(NcclAllReduceCpuTest, IntegerAndDoubleTypesAndOneMember) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> ints =
      AllReduce(root, Consts<int64_t>(root, {2, 2}, {{1, 2, 3, 4}, {10, 20, 30, 40}}), "sum", "i");
  std::vector<Output> doubles =
      AllReduce(root, Consts<double>(root, {2}, {{0.5, -8}, {0.25, 2}}), "max", "d");
  std::vector<Output> ints32 = AllReduce(root, Consts<int32_t>(root, {1}, {{-3}, {7}}), "min", "j");
  std::vector<Output> alone = AllReduce(root, Consts<float>(root, {2}, {{5, 6}}), "prod", "one");
  TW_ASSERT_OK(root.status());
  ClientSession session(root, Cpus(2));
  std::vector<Tensor> got;
  TW_ASSERT_OK(session.Run(
      {ints[0], ints[1], doubles[0], doubles[1], ints32[0], ints32[1], alone[0]}, &got));
  EXPECT_THAT(got[0], TensorIs<int64_t>({2, 2}, {11, 22, 33, 44}));
  EXPECT_THAT(got[1], TensorIs<int64_t>({2, 2}, {11, 22, 33, 44}));
  EXPECT_THAT(got[2], TensorIs<double>({2}, {0.5, 2}));
  EXPECT_THAT(got[3], TensorIs<double>({2}, {0.5, 2}));
  EXPECT_THAT(got[4], TensorIs<int32_t>({1}, {-3}));
  EXPECT_THAT(got[5], TensorIs<int32_t>({1}, {-3}));
  EXPECT_THAT(got[6], TensorIs<float>({2}, {5, 6}));
}

TEST(NcclAllReduceCpuTest, ConsumersOfOneMemberLeaveTheOthersAlone) {
  // The members output one shared buffer; an op that could overwrite its
  // input in place (Add, Neg) must not change what the other member sees.
  Scope root = Scope::NewRootScope();
  std::vector<Output> out =
      AllReduce(root, Consts<float>(root, {4}, {{1, 2, 3, 4}, {1, 1, 1, 1}}), "sum", "r");
  Output neg = ops::Neg(OnCpu(root, 0), out[0]);
  Output plus = ops::AddV2(OnCpu(root, 1), out[1], out[1]);
  TW_ASSERT_OK(root.status());
  ClientSession session(root, Cpus(2));
  std::vector<Tensor> got;
  TW_ASSERT_OK(session.Run({neg, plus, out[0], out[1]}, &got));
  EXPECT_THAT(got[0], TensorIs<float>({4}, {-2, -3, -4, -5}));
  EXPECT_THAT(got[1], TensorIs<float>({4}, {4, 6, 8, 10}));
  EXPECT_THAT(got[2], TensorIs<float>({4}, {2, 3, 4, 5}));
  EXPECT_THAT(got[3], TensorIs<float>({4}, {2, 3, 4, 5}));
}

TEST(NcclAllReduceCpuTest, EveryStepReducesItsOwnFeeds) {
  Scope root = Scope::NewRootScope();
  Output a = ops::Placeholder(OnCpu(root, 0), DT_FLOAT);
  Output b = ops::Placeholder(OnCpu(root, 1), DT_FLOAT);
  // Two collectives in one step, crossing each other's devices.
  std::vector<Output> first = AllReduce(root, {a, b}, "sum", "first");
  std::vector<Output> second = AllReduce(root, {first[1], first[0]}, "sum", "second");
  TW_ASSERT_OK(root.status());
  ClientSession session(root, Cpus(2));
  for (float step = 1; step <= 3; ++step) {
    std::vector<Tensor> got;
    TW_ASSERT_OK(session.Run({{a, Literal<float>({1}, {step})}, {b, Literal<float>({1}, {10})}},
                             {first[0], second[0], second[1]}, &got));
    EXPECT_THAT(got[0], TensorIs<float>({1}, {step + 10}));
    EXPECT_THAT(got[1], TensorIs<float>({1}, {2 * (step + 10)}));
    EXPECT_THAT(got[2], TensorIs<float>({1}, {2 * (step + 10)}));
  }
}

TEST(NcclAllReduceCpuTest, AStepMissingAMemberFailsInsteadOfWaiting) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> out = AllReduce(root, Consts<float>(root, {1}, {{1}, {2}}), "sum", "r");
  TW_ASSERT_OK(root.status());
  ClientSession session(root, Cpus(2));
  std::vector<Tensor> got;
  EXPECT_THAT(session.Run({out[0]}, &got),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "num_devices = 2 but this step runs 1 of its ops"));
}

TEST(NcclAllReduceCpuTest, DisagreeingMembersAreErrors) {
  {
    Scope root = Scope::NewRootScope();
    std::vector<Output> inputs = Consts<float>(root, {1}, {{1}, {2}});
    Output x = ops::NcclAllReduce(OnCpu(root, 0), inputs[0], "sum", 2, "r");
    Output y = ops::NcclAllReduce(OnCpu(root, 1), inputs[1], "sum", 3, "r");
    ClientSession session(root, Cpus(2));
    std::vector<Tensor> got;
    EXPECT_THAT(session.Run({x, y}, &got),
                testing::StatusIs(absl::StatusCode::kInvalidArgument, "has num_devices = 3 but"));
  }
  {
    Scope root = Scope::NewRootScope();
    Output a = ops::Placeholder(OnCpu(root, 0), DT_FLOAT);
    Output b = ops::Placeholder(OnCpu(root, 1), DT_FLOAT);
    std::vector<Output> out = AllReduce(root, {a, b}, "sum", "r");
    ClientSession session(root, Cpus(2));
    std::vector<Tensor> got;
    absl::Status st = session.Run(
        {{a, Literal<float>({2}, {1, 2})}, {b, Literal<float>({3}, {1, 2, 3})}}, out, &got);
    EXPECT_THAT(st,
                testing::StatusIs(absl::StatusCode::kInvalidArgument, "NcclAllReduce 'r': member"));
    EXPECT_THAT(st.message(), HasSubstr("input of shape [3]"));
  }
  {
    Scope root = Scope::NewRootScope();
    std::vector<Output> inputs = Consts<float>(root, {1}, {{1}, {2}});
    Output x = ops::NcclAllReduce(OnCpu(root, 0), inputs[0], "sum", 2, "r");
    Output y = ops::NcclAllReduce(OnCpu(root, 1), inputs[1], "max", 2, "r");
    ClientSession session(root, Cpus(2));
    std::vector<Tensor> got;
    EXPECT_THAT(session.Run({x, y}, &got), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                             "asks for another reduction"));
  }
}

TEST(NcclAllReduceCpuTest, AFailingMemberInputEndsTheWaitingMember) {
  // CPU:1's input fails a numerics check, so its member never joins; the
  // member on CPU:0 is aborted with the step rather than left waiting.
  Scope root = Scope::NewRootScope();
  Output a = ops::Const(OnCpu(root, 0), 1.0f, {1});
  Output nan =
      ops::CheckNumerics(OnCpu(root, 1), ops::Const(OnCpu(root, 1), std::nanf(""), {1}), "bad");
  std::vector<Output> out = AllReduce(root, {a, nan}, "sum", "r");
  TW_ASSERT_OK(root.status());
  ClientSession session(root, Cpus(2));
  std::vector<Tensor> got;
  EXPECT_THAT(session.Run(out, &got), testing::StatusIs(absl::StatusCode::kInvalidArgument, "bad"));
}

}  // namespace
}  // namespace towerflow
