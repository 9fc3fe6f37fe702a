// tfdbg's ops (debug_ops.cc) against TensorFlow 2.21's values and messages
// (tf.raw_ops on these inputs).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// [[1, -2, 0], [inf, -inf, nan]].
Tensor Mixed() {
  const float inf = std::numeric_limits<float>::infinity();
  return Literal<float>({2, 3}, {1, -2, 0, inf, -inf, std::nanf("")});
}

Tensor Summary(const Tensor& t, float lower = -kInf, float upper = kInf) {
  KernelRunner k("DebugNumericSummary");
  k.Attr("tensor_name", "x:0").Attr("lower_bound", lower).Attr("upper_bound", upper);
  return RunOk(k, {t});
}

TEST(DebugNumericSummaryTest, TensorFlowsSummaries) {
  // [initialized, size, nan, -inf, negative, zero, positive, +inf, min, max,
  //  mean, variance, dtype, rank, dims...]: extremes and moments of the
  // finite values.
  EXPECT_THAT(Summary(Mixed()),
              TensorIs<double>({16}, {1, 6, 1, 1, 1, 1, 1, 1, -2, 1, -0.3333333333333333,
                                      1.5555555555555554, 1, 2, 2, 3}));
  EXPECT_THAT(Summary(Literal<int32_t>({4}, {3, -1, 0, 5})),
              TensorIs<double>({15}, {1, 4, 0, 0, 1, 1, 2, 0, -1, 5, 1.75, 5.6875, 3, 1, 4}));
  EXPECT_THAT(Summary(Literal<bool>({3}, {true, false, true})),
              TensorIs<double>({15}, {1, 3, 0, 0, 0, 1, 2, 0, 0, 1, 0.6666666666666666,
                                      0.22222222222222224, 10, 1, 3}));
  EXPECT_THAT(
      Summary(Tensor(DT_FLOAT, TensorShape({0, 2}))),
      TensorIs<double>({16}, {1, 0, 0, 0, 0, 0, 0, 0, kInf, -kInf, kNan, kNan, 1, 2, 0, 2}));
  EXPECT_THAT(Summary(Literal<double>({2}, {1.5, 2.5})),
              TensorIs<double>({15}, {1, 2, 0, 0, 0, 0, 2, 0, 1.5, 2.5, 2, 0.25, 2, 1, 2}));
  EXPECT_THAT(Summary(Literal<float>({}, {7})),
              TensorIs<double>({14}, {1, 1, 0, 0, 0, 0, 1, 0, 7, 7, 7, 0, 1, 0}));
  EXPECT_THAT(Summary(Literal<uint8_t>({2}, {1, 2})),
              TensorIs<double>({15}, {1, 2, 0, 0, 0, 0, 2, 0, 1, 2, 1.5, 0.25, 4, 1, 2}));
  // Custom bounds count the finite values at or past them as infinities.
  EXPECT_THAT(Summary(Mixed(), -1.5f, 0.5f),
              TensorIs<double>({16}, {1, 6, 1, 2, 0, 1, 0, 2, -2, 1, -0.3333333333333333,
                                      1.5555555555555554, 1, 2, 2, 3}));
  EXPECT_THAT(Summary(Literal<float>({2}, {1, 2}), 3, 1),
              TensorIs<double>({15}, {1, 2, 0, 2, 0, 0, 0, 0, 1, 2, 1.5, 0.25, 1, 1, 2}));
}

TEST(DebugNanCountTest, CountsAsTensorFlow) {
  KernelRunner k("DebugNanCount");
  k.Attr("tensor_name", "x:0");
  EXPECT_THAT(RunOk(k, {Mixed()}), TensorIs<int64_t>({1}, {1}));
  EXPECT_THAT(RunOk(k, {Literal<double>({3}, {kNan, 1, kNan})}), TensorIs<int64_t>({1}, {2}));
  EXPECT_THAT(RunOk(k, {Literal<int32_t>({2}, {1, 2})}), TensorIs<int64_t>({1}, {0}));
  EXPECT_THAT(RunOk(k, {Tensor(DT_FLOAT, TensorShape({0, 2}))}), TensorIs<int64_t>({1}, {0}));
  EXPECT_THAT(k.Run({Literal<std::string>({1}, {"a"})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "DebugNanCount takes real numbers or bools, not string"));
}

absl::StatusOr<std::vector<Tensor>> SummaryV2(const Tensor& t, int64_t mode, int64_t id = 7,
                                              DataType output = DT_FLOAT) {
  KernelRunner k("DebugNumericSummaryV2");
  k.Attr("tensor_debug_mode", mode).Attr("tensor_id", id).Attr("output_dtype", output);
  return k.Run({t});
}

Tensor SummaryV2Ok(const Tensor& t, int64_t mode, int64_t id = 7, DataType output = DT_FLOAT) {
  absl::StatusOr<std::vector<Tensor>> out = SummaryV2(t, mode, id, output);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

TEST(DebugNumericSummaryV2Test, EachModeAsTensorFlow) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  // CURT_HEALTH, CONCISE_HEALTH, FULL_HEALTH, SHAPE, REDUCE_INF_NAN_THREE_SLOTS.
  EXPECT_THAT(SummaryV2Ok(Mixed(), 2), TensorIs<float>({2}, {7, 1}));
  EXPECT_THAT(SummaryV2Ok(Mixed(), 3), TensorIs<float>({5}, {7, 6, 1, 1, 1}));
  EXPECT_THAT(SummaryV2Ok(Mixed(), 4), TensorIs<float>({11}, {7, -1, 1, 2, 6, 1, 1, 1, 1, 1, 1}));
  EXPECT_THAT(SummaryV2Ok(Mixed(), 5), TensorIs<float>({10}, {7, 1, 2, 6, 2, 3, 0, 0, 0, 0}));
  EXPECT_THAT(SummaryV2Ok(Mixed(), 8), TensorIs<float>({3}, {-inf, inf, nan}));
  const Tensor ints = Literal<int32_t>({4}, {3, -1, 0, 5});
  EXPECT_THAT(SummaryV2Ok(ints, 2), TensorIs<float>({2}, {7, 0}));
  EXPECT_THAT(SummaryV2Ok(ints, 3), TensorIs<float>({5}, {7, 4, 0, 0, 0}));
  EXPECT_THAT(SummaryV2Ok(ints, 4), TensorIs<float>({11}, {7, -1, 3, 1, 4, 0, 0, 0, 1, 1, 2}));
  EXPECT_THAT(SummaryV2Ok(ints, 5), TensorIs<float>({10}, {7, 3, 1, 4, 4, 0, 0, 0, 0, 0}));
  EXPECT_THAT(SummaryV2Ok(ints, 8), TensorIs<float>({3}, {0, 0, 0}));
  EXPECT_THAT(SummaryV2Ok(Mixed(), 4, 7, DT_DOUBLE),
              TensorIs<double>({11}, {7, -1, 1, 2, 6, 1, 1, 1, 1, 1, 1}));
  // SHAPE keeps the last six dimensions.
  EXPECT_THAT(SummaryV2Ok(Tensor(DT_FLOAT, TensorShape({1, 2, 3, 4, 5, 6, 7})), 5, 1),
              TensorIs<float>({10}, {1, 1, 7, 5040, 2, 3, 4, 5, 6, 7}));
  const Tensor bools = Literal<bool>({3}, {true, false, true});
  EXPECT_THAT(SummaryV2Ok(bools, 5, 1), TensorIs<float>({10}, {1, 10, 1, 3, 3, 0, 0, 0, 0, 0}));
  EXPECT_THAT(SummaryV2Ok(Literal<bool>({1}, {true}), 4, 1),
              TensorIs<float>({11}, {1, -1, 10, 1, 1, 0, 0, 0, 0, 0, 1}));
  EXPECT_THAT(SummaryV2Ok(Tensor(DT_FLOAT, TensorShape({0, 2})), 3, 1),
              TensorIs<float>({5}, {1, 0, 0, 0, 0}));
  EXPECT_THAT(SummaryV2Ok(Literal<int32_t>({}, {3}), 5, 1),
              TensorIs<float>({10}, {1, 3, 0, 1, 0, 0, 0, 0, 0, 0}));
  // The 16-bit floats as themselves (dtype 14, bfloat16).
  EXPECT_THAT(SummaryV2Ok(Literal<bfloat16>({2}, {bfloat16(1.0f), bfloat16(nan)}), 4, 1),
              TensorIs<float>({11}, {1, -1, 14, 1, 2, 0, 0, 1, 0, 0, 1}));
  EXPECT_THAT(SummaryV2Ok(Literal<half>({2}, {half(1.0f), half(nan)}), 8, 1),
              TensorIs<float>({3}, {0, 0, nan}));
  EXPECT_THAT(SummaryV2Ok(Literal<float>({}, {2}), 4, int64_t{1} << 40, DT_DOUBLE),
              TensorIs<double>({11}, {1099511627776.0, -1, 1, 0, 1, 0, 0, 0, 0, 0, 1}));

  EXPECT_THAT(SummaryV2(Literal<float>({}, {2}), 4, int64_t{1} << 40),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "DebugNumericSummaryV2Op requires tensor_id to be less than or equal to "
                       "(2^24). Given tensor_id:1099511627776"));
  for (int64_t mode : {-1, 0, 1, 6, 7}) {
    EXPECT_THAT(SummaryV2(Mixed(), mode),
                StatusIs(absl::StatusCode::kUnimplemented,
                         absl::StrCat("Unimplemented tensor debug mode: ", mode)));
  }
}

TEST(DebugIdentityTest, PassesTheInputAndChecksItsAttrsAsTensorFlow) {
  const auto identity = [](const std::string& tensor_name) {
    KernelRunner k("DebugIdentity");
    k.Attr("tensor_name", tensor_name);
    return k.Run({Literal<int32_t>({}, {3})});
  };
  for (const char* name : {"x:0", "a", ":1"}) {
    absl::StatusOr<std::vector<Tensor>> out = identity(name);
    ASSERT_TRUE(out.ok()) << name << ": " << out.status();
    EXPECT_THAT((*out)[0], TensorIs<int32_t>({}, {3}));
  }
  EXPECT_THAT(identity(""),
              StatusIs(absl::StatusCode::kInvalidArgument, "Failed to parse tensor name: \"\""));
  EXPECT_THAT(identity("a:1:2"), StatusIs(absl::StatusCode::kInvalidArgument,
                                          "Failed to parse tensor name: \"a:1:2\""));
  EXPECT_THAT(identity("a:b"), StatusIs(absl::StatusCode::kInvalidArgument,
                                        "Invalid string value for output_slot: \"b\""));
  // Dumps are not written: a node that asks for them is refused.
  KernelRunner urls("DebugIdentity");
  urls.Attr("tensor_name", "x:0").Attr("debug_urls", std::vector<std::string>{"file:///tmp/d"});
  EXPECT_THAT(urls.Run({Literal<int32_t>({}, {3})}),
              StatusIs(absl::StatusCode::kUnimplemented, "publishing to debug_urls"));

  KernelRunner v2("DebugIdentityV2");
  EXPECT_THAT(RunOk(v2, {Mixed()}),
              TensorIs<float>({2, 3}, {1, -2, 0, static_cast<float>(kInf),
                                       static_cast<float>(-kInf), std::nanf("")}));
  v2.Attr("debug_urls", std::vector<std::string>{"grpc://x"});
  EXPECT_THAT(v2.Run({Mixed()}), StatusIs(absl::StatusCode::kInvalidArgument,
                                          "Unsupported debug URL schema in: grpc://x"));
}

TEST(CopyTest, CopiesIntoABufferOfItsOwn) {
  for (const char* op : {"Copy", "CopyHost"}) {
    KernelRunner k(op);
    const Tensor in = Mixed();
    const Tensor out = RunOk(k, {in});
    EXPECT_THAT(out, TensorIs<float>({2, 3}, {1, -2, 0, static_cast<float>(kInf),
                                              static_cast<float>(-kInf), std::nanf("")}));
    EXPECT_NE(out.raw_data(), in.raw_data()) << op;
    KernelRunner strings(op);
    EXPECT_EQ(Values<std::string>(RunOk(strings, {Literal<std::string>({2}, {"a", "bc"})})),
              (std::vector<std::string>{"a", "bc"}));
  }
}

}  // namespace
}  // namespace towerflow
