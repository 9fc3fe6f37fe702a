// Optimizer updates, checks and summaries.
#include <cmath>
#include <limits>

#include "absl/strings/escaping.h"
#include "absl/time/clock.h"
#include "framework/device.h"
#include "framework/resource_mgr.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "proto/summary.pb.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;

using ::testing::HasSubstr;

#define TW_ASSERT_OK_OR_FAIL(expr)                       \
  do {                                                   \
    const auto tw_result_ = (expr);                      \
    ASSERT_TRUE(tw_result_.ok()) << tw_result_.status(); \
  } while (0)

TEST(TrainingOpsTest, GradientDescent) {
  KernelRunner r("ApplyGradientDescent");
  EXPECT_THAT(
      RunOk(r, {Literal<float>({2}, {1, 2}), Scalar<float>(0.5f), Literal<float>({2}, {2, -4})}),
      TensorIs<float>({2}, {0, 4}));
  EXPECT_THAT(
      r.Run({Literal<float>({2}, {1, 2}), Scalar<float>(0.5f), Literal<float>({3}, {1, 2, 3})})
          .status()
          .message(),
      HasSubstr("grad has shape [3]"));
  EXPECT_FALSE(r.Run({Literal<float>({2}, {1, 2}), Literal<float>({1}, {0.5f}),
                      Literal<float>({2}, {2, -4})})
                   .ok());
}

TEST(TrainingOpsTest, MomentumAndNesterov) {
  // accum = 0.5 * 0.9 + 1 = 1.45; var = 1 - 0.1 * 1.45 = 0.855.
  KernelRunner r("ApplyMomentum");
  EXPECT_THAT(RunOk(r, {Literal<float>({1}, {1}), Literal<float>({1}, {0.5f}), Scalar<float>(0.1f),
                        Literal<float>({1}, {1}), Scalar<float>(0.9f)}),
              TensorNear<float>({1}, {0.855f}, 1e-6));
  // Nesterov: var -= grad*lr + accum*momentum*lr = 1 - 0.1 - 1.305*0.1 = 0.7695.
  KernelRunner n("ApplyMomentum");
  n.Attr("use_nesterov", true);
  EXPECT_THAT(RunOk(n, {Literal<float>({1}, {1}), Literal<float>({1}, {0.5f}), Scalar<float>(0.1f),
                        Literal<float>({1}, {1}), Scalar<float>(0.9f)}),
              TensorNear<float>({1}, {0.7695f}, 1e-6));
}

TEST(TrainingOpsTest, AdamFirstStep) {
  // From zero slots, step 1: lr_t = 0.001 * sqrt(1 - 0.999) / (1 - 0.9),
  // m = 0.1 g, v = 0.001 g^2, var -= lr_t * m / (sqrt(v) + 1e-8).
  const double lr_t = 0.001 * std::sqrt(1 - 0.999) / (1 - 0.9);
  const double g = 2.0, m = 0.1 * g, v = 0.001 * g * g;
  const double want = 1.0 - lr_t * m / (std::sqrt(v) + 1e-8);
  KernelRunner r("ApplyAdam");
  EXPECT_THAT(RunOk(r, {Literal<double>({1}, {1}), Literal<double>({1}, {0}),
                        Literal<double>({1}, {0}), Scalar<double>(0.9), Scalar<double>(0.999),
                        Scalar<double>(0.001), Scalar<double>(0.9), Scalar<double>(0.999),
                        Scalar<double>(1e-8), Literal<double>({1}, {g})}),
              TensorNear<double>({1}, {want}, 1e-12));
}

TEST(TrainingOpsTest, AdagradAndRmsProp) {
  // accum = 0.1 + 4 = 4.1; var = 1 - 0.5 * 2 / sqrt(4.1).
  KernelRunner a("ApplyAdagrad");
  EXPECT_THAT(RunOk(a, {Literal<double>({1}, {1}), Literal<double>({1}, {0.1}), Scalar<double>(0.5),
                        Literal<double>({1}, {2})}),
              TensorNear<double>({1}, {1 - 0.5 * 2 / std::sqrt(4.1)}, 1e-12));
  // ms = 0.9*1 + 0.1*4 = 1.3; mom = 0.5*0 + 0.01*2/sqrt(1.3+1e-10); var -= mom.
  KernelRunner r("ApplyRMSProp");
  EXPECT_THAT(RunOk(r, {Literal<double>({1}, {1}), Literal<double>({1}, {1}),
                        Literal<double>({1}, {0}), Scalar<double>(0.01), Scalar<double>(0.9),
                        Scalar<double>(0.5), Scalar<double>(1e-10), Literal<double>({1}, {2})}),
              TensorNear<double>({1}, {1 - 0.02 / std::sqrt(1.3 + 1e-10)}, 1e-12));
}

TEST(LoggingOpsTest, CheckNumericsAndAssert) {
  KernelRunner c("CheckNumerics");
  c.Attr("message", "loss");
  EXPECT_THAT(RunOk(c, {Literal<float>({2}, {1, 2})}), TensorIs<float>({2}, {1, 2}));
  EXPECT_THAT(c.Run({Literal<float>({2}, {1, NAN})}).status().message(),
              HasSubstr("loss : Tensor had NaN values"));
  EXPECT_THAT(c.Run({Literal<float>({1}, {INFINITY})}).status().message(), HasSubstr("Inf"));
  KernelRunner a("Assert");
  Tensor msg(DT_STRING, TensorShape());
  *msg.data<std::string>() = "x must be positive";
  EXPECT_TRUE(a.Run({Scalar<bool>(true), msg}).ok());
  EXPECT_THAT(a.Run({Scalar<bool>(false), msg, Literal<int32_t>({2}, {-1, 5})}).status().message(),
              HasSubstr("assertion failed: x must be positive [-1 5]"));
  EXPECT_THAT(
      a.Run({Literal<bool>({1}, {true}), msg}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "In[0] should be a scalar: [1]"));
}

// TF 2.21's messages: the anomalies found, -Inf before +Inf before NaN.
TEST(LoggingOpsTest, CheckNumericsV2TellsTheInfinitiesApart) {
  KernelRunner c("CheckNumericsV2");
  c.Attr("message", std::string("m"));
  EXPECT_THAT(RunOk(c, {Literal<float>({2}, {1, 2})}), TensorIs<float>({2}, {1, 2}));
  const std::vector<std::pair<std::vector<float>, std::string>> cases = {
      {{1, INFINITY}, "+Inf"},
      {{1, -INFINITY}, "-Inf"},
      {{NAN, 1}, "NaN"},
      {{INFINITY, -INFINITY}, "-Inf and +Inf"},
      {{NAN, INFINITY}, "+Inf and NaN"},
      {{NAN, -INFINITY}, "-Inf and NaN"},
      {{NAN, INFINITY, -INFINITY}, "-Inf, +Inf, and NaN"}};
  for (const auto& [values, what] : cases) {
    EXPECT_THAT(c.Run({Literal<float>({static_cast<int64_t>(values.size())}, values)}),
                testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                  "m : Tensor had " + what + " values"));
  }
}

// summarize beyond int (a fuzzer's 2^31 and 2^32 - 1, which once became -1
// and aborted in SummarizeValue) shows every value; a negative one none.
TEST(LoggingOpsTest, AnySummarizeIsSafe) {
  for (int64_t summarize : {int64_t{2147483648}, int64_t{4294967295}, int64_t{1} << 62}) {
    KernelRunner a("Assert");
    a.Attr("summarize", summarize);
    EXPECT_THAT(a.Run({Scalar<bool>(false), Literal<int32_t>({3}, {1, 2, 3})}),
                testing::StatusIs(absl::StatusCode::kInvalidArgument, "assertion failed: [1 2 3]"))
        << summarize;
    KernelRunner p("Print");
    p.Attr("summarize", summarize);
    p.Attr("message", "m");
    EXPECT_THAT(RunOk(p, {Literal<float>({2}, {1, 2}), Literal<float>({2}, {1, 2})}),
                TensorIs<float>({2}, {1, 2}));
  }
  KernelRunner negative("Assert");
  negative.Attr("summarize", int64_t{-5});
  EXPECT_THAT(negative.Run({Scalar<bool>(false), Literal<int32_t>({2}, {1, 2})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "assertion failed: [...]"));
}

Tensor Strings(const TensorShape& shape, std::vector<std::string> v) {
  Tensor t(DT_STRING, shape);
  for (size_t i = 0; i < v.size(); ++i) t.data<std::string>()[i] = v[i];
  return t;
}

// tf.compat.v1.summary.image's bytes from TF 2.21, PNGs included: negative
// floats centred on 128, a NaN pixel in bad_color, non-negative ones scaled
// to 255, uint8 as they are.
// Timestamp is the time of its run in seconds, a whole number of
// microseconds (a minute's slack for a clock set meanwhile).
TEST(LoggingOpsTest, TimestampIsNowInSeconds) {
  KernelRunner r("Timestamp");
  const double before = static_cast<double>(absl::ToUnixMicros(absl::Now())) / 1e6;
  const Tensor ts = RunOk(r, {});
  const double after = static_cast<double>(absl::ToUnixMicros(absl::Now())) / 1e6;
  ASSERT_EQ(ts.dtype(), DT_DOUBLE);
  ASSERT_EQ(ts.dims(), 0);
  const double t = ts.data<double>()[0];
  EXPECT_GE(t, before - 60);
  EXPECT_LE(t, after + 60);
  EXPECT_NEAR(t * 1e6, std::round(t * 1e6), 1.0);
}

TEST(LoggingOpsTest, ImageSummaryGivesTensorFlowsBytes) {
  const Tensor x =
      Literal<float>({2, 2, 2, 3}, {-1, 0.5f, 2, 0.25f, NAN, 1, 3, -2.5f, 0, 1.5f, 0.75f, -0.125f,
                                    0,  1,    2, 3,     4,   5, 6, 7,     8, 9,    10,    11});
  KernelRunner images("ImageSummary");
  images.Attr("T", DT_FLOAT);
  const Tensor floats = RunOk(images, {Strings({}, {"imgs"}), x});
  EXPECT_EQ(absl::BytesToHexString(*floats.data<std::string>()),
            "0a670a0c696d67732f696d6167652f302257080210021803224f89504e470d0a1a0a0000000d49484452"
            "00000002000000020802000000fdd49a730000001649444154089963089d7ae53f0303e37fb186039dbf"
            "002b2806971edf92820000000049454e44ae4260820a670a0c696d67732f696d6167652f312257080210"
            "021803224f89504e470d0a1a0a0000000d4948445200000002000000020802000000fdd49a7300000016"
            "494441540899636410d773757565e85eb4f3c2f3ff0018fe05b2b53c70d50000000049454e44ae426082");
  std::vector<uint8_t> pixels(12);
  for (int i = 0; i < 12; ++i) pixels[i] = static_cast<uint8_t>(20 * i);
  KernelRunner one("ImageSummary");
  one.Attr("T", DT_UINT8).Attr("max_images", int64_t{1});
  const Tensor bytes = RunOk(one, {Strings({}, {"u"}), Literal<uint8_t>({1, 2, 2, 3}, pixels)});
  EXPECT_EQ(absl::BytesToHexString(*bytes.data<std::string>()),
            "0a620a07752f696d6167652257080210021803224f89504e470d0a1a0a0000000d494844520000000200"
            "0000020802000000fdd49a7300000016494441540899636410d1b0b1b161a8e859b0e5c41d0015ac04ee"
            "ddad85ae0000000049454e44ae426082");
  EXPECT_THAT(images.Run({Strings({}, {"t"}), Literal<float>({1, 2, 2, 2}, std::vector<float>(8))}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Tensor must be 4-D with last dim 1, 3, or 4, not [1,2,2,2]"));
}

TEST(LoggingOpsTest, SummariesSerializeTensorBoardProtos) {
  KernelRunner s("ScalarSummary");
  const Tensor scalar = RunOk(s, {Strings({}, {"loss"}), Scalar<float>(2.5f)});
  Summary sum;
  ASSERT_TRUE(sum.ParseFromString(*scalar.data<std::string>()));
  ASSERT_EQ(sum.value_size(), 1);
  EXPECT_EQ(sum.value(0).tag(), "loss");
  EXPECT_EQ(sum.value(0).simple_value(), 2.5f);

  KernelRunner h("HistogramSummary");
  const Tensor histo = RunOk(h, {Strings({}, {"w"}), Literal<float>({4}, {-1, 0, 0, 3})});
  ASSERT_TRUE(sum.ParseFromString(*histo.data<std::string>()));
  const HistogramProto& p = sum.value(0).histo();
  EXPECT_EQ(p.min(), -1);
  EXPECT_EQ(p.max(), 3);
  EXPECT_EQ(p.num(), 4);
  EXPECT_EQ(p.sum(), 2);
  EXPECT_EQ(p.sum_squares(), 10);
  // TF's buckets byte for byte: each non-empty one, each run of empty ones
  // as one empty bucket (tf.raw_ops.HistogramSummary's numbers).
  const std::vector<double> limits = {-1.0089710279437536,
                                      -0.917246389039776,
                                      0,
                                      1e-12,
                                      2.8787120958073054,
                                      3.1665833053880363,
                                      std::numeric_limits<double>::max()};
  ASSERT_EQ(p.bucket_limit_size(), static_cast<int>(limits.size()));
  for (size_t i = 0; i < limits.size(); ++i) EXPECT_DOUBLE_EQ(p.bucket_limit(i), limits[i]) << i;
  EXPECT_THAT(p.bucket(), ElementsAre(0, 1, 0, 2, 0, 1, 0));
  EXPECT_THAT(h.Run({Strings({}, {"w"}), Literal<float>({1}, {NAN})}).status().message(),
              HasSubstr("Nan in summary histogram for: w"));

  KernelRunner m("MergeSummary");
  const Tensor merged = RunOk(m, {scalar, histo});
  ASSERT_TRUE(sum.ParseFromString(*merged.data<std::string>()));
  EXPECT_EQ(sum.value_size(), 2);
  EXPECT_THAT(m.Run({scalar, scalar}).status().message(), HasSubstr("Duplicate tag loss"));
  EXPECT_THAT(m.Run({Strings({}, {"\xff\xff garbage"})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Could not parse one of the summary inputs (input 0)"));
}

}  // namespace
}  // namespace towerflow

namespace towerflow {
namespace {

using ::testing::HasSubstr;

TEST(ResourceOpsTest, ResourceGatherReadsRows) {
  const Tensor h = ResourceVariable("emb", Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  KernelRunner g("ResourceGather");
  g.Attr("dtype", DT_FLOAT);
  EXPECT_THAT(RunOk(g, {h, Literal<int32_t>({2}, {2, 0})}), TensorIs<float>({2, 2}, {5, 6, 1, 2}));
  EXPECT_THAT(g.Run({h, Literal<int32_t>({1}, {3})}).status().message(),
              HasSubstr("indices[0] = 3 is not in [0, 3)"));
  KernelRunner wrong("ResourceGather");
  wrong.Attr("dtype", DT_INT32);
  EXPECT_THAT(wrong.Run({h, Literal<int32_t>({1}, {0})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Variable emb holds float but ResourceGather expects int32"));
  // batch_dims 1: each row of the variable gathers with its own indices.
  const Tensor rows = ResourceVariable("batched", Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  KernelRunner batched("ResourceGather");
  batched.Attr("dtype", DT_FLOAT).Attr("batch_dims", int64_t{1});
  EXPECT_THAT(RunOk(batched, {rows, Literal<int64_t>({2, 2}, {2, 0, 1, 1})}),
              TensorIs<float>({2, 2}, {3, 1, 5, 5}));
  EXPECT_THAT(batched.Run({rows, Literal<int64_t>({2, 1}, {0, 3})}).status().message(),
              HasSubstr("indices[1] = 3 is not in [0, 3)"));
}

TEST(TrainingOpsTest, SparseMomentumUpdatesIndexedRowsInOrder) {
  KernelRunner r("SparseApplyMomentum");
  const Tensor var = Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor accum = Literal<float>({3, 2}, {0, 0, 0, 0, 0, 0});
  // Row 2: accum 1, var 5 - 0.1; row 0: accum 2, var 1 - 0.2; row 1 untouched.
  EXPECT_THAT(RunOk(r, {var, accum, Scalar<float>(0.1f), Literal<float>({2, 2}, {1, 1, 2, 2}),
                        Literal<int32_t>({2}, {2, 0}), Scalar<float>(0.9f)}),
              TensorNear<float>({3, 2}, {0.8f, 1.8f, 3, 4, 4.9f, 5.9f}, 1e-6));
  // Row 1 twice, as two dense steps: accum 1 then 1.9, var 3 - 0.1 - 0.19.
  EXPECT_THAT(RunOk(r, {var, accum, Scalar<float>(0.1f), Literal<float>({2, 2}, {1, 1, 1, 1}),
                        Literal<int64_t>({2}, {1, 1}), Scalar<float>(0.9f)}),
              TensorNear<float>({3, 2}, {1, 2, 2.71f, 3.71f, 5, 6}, 1e-6));
  EXPECT_THAT(r.Run({var, accum, Scalar<float>(0.1f), Literal<float>({1, 2}, {1, 1}),
                     Literal<int32_t>({1}, {3}), Scalar<float>(0.9f)})
                  .status()
                  .message(),
              HasSubstr("Index 3 at offset 0 in indices is out of range [0, 3)"));
  EXPECT_THAT(r.Run({var, accum, Scalar<float>(0.1f), Literal<float>({1, 2}, {1, 1}),
                     Literal<int32_t>({2}, {0, 1}), Scalar<float>(0.9f)})
                  .status()
                  .message(),
              HasSubstr("grad must be the same size as indices in the first dimension"));
  EXPECT_THAT(
      r.Run({var, Literal<float>({2, 2}, {0, 0, 0, 0}), Scalar<float>(0.1f),
             Literal<float>({1, 2}, {1, 1}), Literal<int32_t>({1}, {0}), Scalar<float>(0.9f)})
          .status()
          .message(),
      HasSubstr("has shape [2,2] but var has shape [3,2]"));
  EXPECT_THAT(r.Run({var, accum, Scalar<float>(0.1f), Literal<float>({1, 3}, {1, 1, 1}),
                     Literal<int32_t>({1}, {0}), Scalar<float>(0.9f)})
                  .status()
                  .message(),
              HasSubstr("var and grad must match in dimension 1"));
  // Nesterov: accum = 1; var -= 0.1 * 1 + 0.1 * 0.9 * 1.
  KernelRunner n("SparseApplyMomentum");
  n.Attr("use_nesterov", true);
  EXPECT_THAT(
      RunOk(n, {Literal<double>({2}, {1, 1}), Literal<double>({2}, {0, 0}), Scalar<double>(0.1),
                Literal<double>({1}, {1}), Literal<int32_t>({1}, {1}), Scalar<double>(0.9)}),
      TensorNear<double>({2}, {1, 0.81}, 1e-12));
}

TEST(TrainingOpsTest, SparseAdagradUpdatesIndexedRows) {
  KernelRunner r("SparseApplyAdagrad");
  // Row 1: accum 0.1 + 4, var 1 - 0.5 * 2 / sqrt(4.1); row 0 untouched.
  EXPECT_THAT(
      RunOk(r, {Literal<double>({2, 1}, {1, 1}), Literal<double>({2, 1}, {0.1, 0.1}),
                Scalar<double>(0.5), Literal<double>({1, 1}, {2}), Literal<int32_t>({1}, {1})}),
      TensorNear<double>({2, 1}, {1, 1 - 0.5 * 2 / std::sqrt(4.1)}, 1e-12));
  KernelRunner fixed("SparseApplyAdagrad");
  fixed.Attr("update_slots", false);
  EXPECT_THAT(
      RunOk(fixed, {Literal<double>({2, 1}, {1, 1}), Literal<double>({2, 1}, {4, 4}),
                    Scalar<double>(0.5), Literal<double>({1, 1}, {2}), Literal<int32_t>({1}, {0})}),
      TensorNear<double>({2, 1}, {0.5, 1}, 1e-12));
}

TEST(TrainingOpsTest, SparseRmsPropUpdatesIndexedRowsInOrder) {
  KernelRunner r("SparseApplyRMSProp");
  const Tensor var = Literal<double>({3, 1}, {1, 2, 3});
  const Tensor ms = Literal<double>({3, 1}, {1, 1, 1});
  const Tensor mom = Literal<double>({3, 1}, {0, 0, 0});
  const auto run = [&](const Tensor& grad, const Tensor& indices) {
    return r.Run({var, ms, mom, Scalar<double>(0.1), Scalar<double>(0.9), Scalar<double>(0.5),
                  Scalar<double>(1e-10), grad, indices});
  };
  // Row 2 (g 2): ms 1 + (4 - 1) * 0.1 = 1.3, mom 0.1 * 2 / sqrt(1.3), var 3
  // - mom. Row 0 (g 3): ms 1.8, mom 0.3 / sqrt(1.8). Row 1 untouched.
  absl::StatusOr<std::vector<Tensor>> out =
      run(Literal<double>({2, 1}, {2, 3}), Literal<int32_t>({2}, {2, 0}));
  TW_ASSERT_OK_OR_FAIL(out);
  EXPECT_THAT(
      (*out)[0],
      TensorNear<double>(
          {3, 1}, {1 - 0.3 / std::sqrt(1.8 + 1e-10), 2, 3 - 0.2 / std::sqrt(1.3 + 1e-10)}, 1e-12));
  // Row 1 twice, as two dense steps of that row: ms 1.3 then 1.3 * 0.9 +
  // 0.4 = 1.57; mom m1 = 0.2 / sqrt(1.3), then 0.5 m1 + 0.2 / sqrt(1.57).
  const double m1 = 0.2 / std::sqrt(1.3 + 1e-10);
  const double m2 = 0.5 * m1 + 0.2 / std::sqrt(1.57 + 1e-10);
  out = run(Literal<double>({2, 1}, {2, 2}), Literal<int64_t>({2}, {1, 1}));
  TW_ASSERT_OK_OR_FAIL(out);
  EXPECT_THAT((*out)[0], TensorNear<double>({3, 1}, {1, 2 - m1 - m2, 3}, 1e-12));
  EXPECT_THAT(run(Literal<double>({1, 1}, {1}), Literal<int32_t>({1}, {-1})).status().message(),
              HasSubstr("Index -1 at offset 0 in indices is out of range [0, 3)"));
  EXPECT_THAT(r.Run({var, Literal<double>({2, 1}, {1, 1}), mom, Scalar<double>(0.1),
                     Scalar<double>(0.9), Scalar<double>(0.5), Scalar<double>(1e-10),
                     Literal<double>({1, 1}, {1}), Literal<int32_t>({1}, {0})})
                  .status()
                  .message(),
              HasSubstr("has shape [2,1] but var has shape [3,1]"));
}

TEST(ResourceOpsTest, ResourceSparseApplyUpdatesTheVariableAndItsSlot) {
  const Tensor v = ResourceVariable("emb_sparse", Literal<float>({3, 1}, {1, 2, 3}));
  const Tensor accum = ResourceVariable("emb_sparse_accum", Literal<float>({3, 1}, {0, 0, 0}));
  KernelRunner m("ResourceSparseApplyMomentum");
  TW_ASSERT_OK_OR_FAIL(m.Run({v, accum, Scalar<float>(0.5f), Literal<float>({2, 1}, {1, 2}),
                              Literal<int32_t>({2}, {2, 2}), Scalar<float>(0.5f)}));
  // Row 2: accum 1 then 0.5 + 2 = 2.5; var 3 - 0.5 - 1.25.
  EXPECT_THAT(ReadVariable("emb_sparse"), TensorNear<float>({3, 1}, {1, 2, 1.25f}, 1e-6));
  EXPECT_THAT(ReadVariable("emb_sparse_accum"), TensorNear<float>({3, 1}, {0, 0, 2.5f}, 1e-6));
}

TEST(ResourceOpsTest, ResourceApplyUpdatesTheVariable) {
  const Tensor v = ResourceVariable("w_gd", Literal<float>({2}, {1, 2}));
  const Tensor accum = ResourceVariable("w_gd_momentum", Literal<float>({2}, {0, 0}));
  KernelRunner gd("ResourceApplyGradientDescent");
  TW_ASSERT_OK_OR_FAIL(gd.Run({v, Scalar<float>(0.5f), Literal<float>({2}, {2, 2})}));
  EXPECT_THAT(ReadVariable("w_gd"), TensorIs<float>({2}, {0, 1}));
  KernelRunner m("ResourceApplyMomentum");
  for (int step = 0; step < 2; ++step) {
    TW_ASSERT_OK_OR_FAIL(
        m.Run({v, accum, Scalar<float>(0.1f), Literal<float>({2}, {1, 1}), Scalar<float>(0.9f)}));
  }
  // accum: 1 then 1.9; var: 0 - 0.1 - 0.19 = -0.29, 1 - 0.29 = 0.71.
  EXPECT_THAT(ReadVariable("w_gd"), TensorNear<float>({2}, {-0.29f, 0.71f}, 1e-6));
  EXPECT_THAT(ReadVariable("w_gd_momentum"), TensorNear<float>({2}, {1.9f, 1.9f}, 1e-6));
  Tensor missing(DT_RESOURCE, TensorShape());
  *missing.data<ResourceHandle>() =
      ResourceHandle{TestCpuDevice()->name(), "localhost", "nope", "Var"};
  EXPECT_EQ(gd.Run({missing, Scalar<float>(0.5f), Literal<float>({2}, {2, 2})}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace towerflow

namespace towerflow {
namespace {

using ::testing::HasSubstr;

// Rows [3, 2] = {1, 2, 3, 4, 5, 6}, indices {2, 0, 2}: row 2 takes two
// updates, in index order; row 1 none.
TEST(ScatterOpsTest, RefScattersAddSubtractAndAssignRowsInIndexOrder) {
  const Tensor var = Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor indices = Literal<int32_t>({3}, {2, 0, 2});
  const Tensor updates = Literal<float>({3, 2}, {10, 20, 30, 40, 50, 60});
  KernelRunner add("ScatterAdd");
  EXPECT_THAT(RunOk(add, {var, indices, updates}), TensorIs<float>({3, 2}, {31, 42, 3, 4, 65, 86}));
  KernelRunner sub("ScatterSub");
  EXPECT_THAT(RunOk(sub, {var, indices, updates}),
              TensorIs<float>({3, 2}, {-29, -38, 3, 4, -55, -74}));
  KernelRunner update("ScatterUpdate");
  EXPECT_THAT(RunOk(update, {var, indices, updates}),
              TensorIs<float>({3, 2}, {30, 40, 3, 4, 50, 60}));
  // A scalar update goes to every element of every indexed row.
  EXPECT_THAT(RunOk(add, {var, Literal<int64_t>({2}, {1, 1}), Scalar<float>(0.5f)}),
              TensorIs<float>({3, 2}, {1, 2, 4, 5, 5, 6}));
  EXPECT_THAT(RunOk(update, {var, Literal<int64_t>({1}, {0}), Scalar<float>(-1)}),
              TensorIs<float>({3, 2}, {-1, -1, 3, 4, 5, 6}));
  // Indices of rank 2: updates [2, 1, 2].
  EXPECT_THAT(
      RunOk(sub, {var, Literal<int64_t>({2, 1}, {0, 1}), Literal<float>({2, 1, 2}, {1, 1, 2, 2})}),
      TensorIs<float>({3, 2}, {0, 1, 1, 2, 5, 6}));
  // No indices: the variable as it was.
  EXPECT_THAT(RunOk(add, {var, Literal<int32_t>({0}, {}), Literal<float>({0, 2}, {})}),
              TensorIs<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  KernelRunner ints("ScatterAdd");
  EXPECT_THAT(RunOk(ints, {Literal<int64_t>({4}, {1, 2, 3, 4}), Literal<int32_t>({3}, {3, 3, 0}),
                           Literal<int64_t>({3}, {10, 20, 30})}),
              TensorIs<int64_t>({4}, {31, 2, 3, 34}));
}

TEST(ScatterOpsTest, RefScattersRefuseBadIndicesAndShapes) {
  const Tensor var = Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  KernelRunner add("ScatterAdd");
  EXPECT_THAT(
      add.Run({var, Literal<int32_t>({2}, {0, 3}), Literal<float>({2, 2}, {1, 1, 1, 1})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "indices[1] = 3 is not in [0, 3)"));
  EXPECT_THAT(add.Run({var, Literal<int32_t>({1}, {-1}), Literal<float>({1, 2}, {1, 1})})
                  .status()
                  .message(),
              HasSubstr("indices[0] = -1 is not in [0, 3)"));
  EXPECT_THAT(
      add.Run({var, Literal<int32_t>({2}, {0, 1}), Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6})})
          .status()
          .message(),
      HasSubstr("Must have updates.shape = indices.shape + params.shape[1:] or "
                "updates.shape = [], got updates.shape [2,3], indices.shape [2], "
                "params.shape [3,2]"));
  EXPECT_THAT(
      add.Run({Scalar<float>(1), Literal<int32_t>({1}, {0}), Scalar<float>(1)}).status().message(),
      HasSubstr("params must be at least 1-D, got shape []"));
}

TEST(ScatterOpsTest, ResourceScattersUpdateTheVariableCopyingASharedBuffer) {
  const Tensor h = ResourceVariable("scattered", Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  const Tensor before = ReadVariable("scattered");  // shares the variable's buffer
  KernelRunner add("ResourceScatterAdd");
  TW_ASSERT_OK_OR_FAIL(
      add.Run({h, Literal<int32_t>({3}, {2, 0, 2}), Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6})}));
  EXPECT_THAT(ReadVariable("scattered"), TensorIs<float>({3, 2}, {4, 6, 3, 4, 11, 14}));
  EXPECT_THAT(before, TensorIs<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  KernelRunner sub("ResourceScatterSub");
  TW_ASSERT_OK_OR_FAIL(sub.Run({h, Literal<int64_t>({1}, {1}), Scalar<float>(3)}));
  EXPECT_THAT(ReadVariable("scattered"), TensorIs<float>({3, 2}, {4, 6, 0, 1, 11, 14}));
  KernelRunner update("ResourceScatterUpdate");
  TW_ASSERT_OK_OR_FAIL(
      update.Run({h, Literal<int32_t>({2}, {1, 1}), Literal<float>({2, 2}, {7, 8, 9, 10})}));
  EXPECT_THAT(ReadVariable("scattered"), TensorIs<float>({3, 2}, {4, 6, 9, 10, 11, 14}));
  // A bad index anywhere leaves every row as it was.
  EXPECT_THAT(update.Run({h, Literal<int32_t>({2}, {0, 5}), Literal<float>({2, 2}, {0, 0, 0, 0})})
                  .status()
                  .message(),
              HasSubstr("indices[1] = 5 is not in [0, 3)"));
  EXPECT_THAT(ReadVariable("scattered"), TensorIs<float>({3, 2}, {4, 6, 9, 10, 11, 14}));
  // The kernel's dtype against the variable's.
  const Tensor ints = ResourceVariable("scattered_ints", Literal<int32_t>({2}, {1, 2}));
  EXPECT_THAT(
      add.Run({ints, Literal<int32_t>({1}, {0}), Literal<float>({1}, {1})}).status().message(),
      HasSubstr("Trying to scatter into variable scattered_ints with wrong dtype. "
                "Expected int32 got float"));
  KernelRunner int_add("ResourceScatterAdd");
  TW_ASSERT_OK_OR_FAIL(
      int_add.Run({ints, Literal<int32_t>({2}, {1, 1}), Literal<int32_t>({2}, {5, 6})}));
  EXPECT_THAT(ReadVariable("scattered_ints"), TensorIs<int32_t>({2}, {1, 13}));
}

// TF 2.21's values (tf.raw_ops on a tf.Variable): rows in index order.
TEST(ScatterOpsTest, ResourceScattersMultiplyDivideAndTakeExtremes) {
  const Tensor var = Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor indices = Literal<int32_t>({3}, {2, 0, 2});
  const Tensor updates = Literal<float>({3, 2}, {10, 20, 30, -40, 0.5f, 60});
  const std::vector<std::pair<const char*, std::vector<float>>> want = {
      {"ResourceScatterMul", {30, -80, 3, 4, 25, 7200}},
      {"ResourceScatterDiv", {0.033333335f, -0.05f, 3, 4, 1, 0.0050000004f}},
      {"ResourceScatterMax", {30, 2, 3, 4, 10, 60}},
      {"ResourceScatterMin", {1, -40, 3, 4, 0.5f, 6}}};
  for (const auto& [op, values] : want) {
    const Tensor h = ResourceVariable(op, var);
    KernelRunner r(op);
    TW_ASSERT_OK_OR_FAIL(r.Run({h, indices, updates}));
    EXPECT_THAT(ReadVariable(op), TensorNear<float>({3, 2}, values, 1e-7)) << op;
  }
  const Tensor ints = ResourceVariable("divided_ints", Literal<int32_t>({2}, {7, 8}));
  KernelRunner div("ResourceScatterDiv");
  EXPECT_THAT(div.Run({ints, Literal<int32_t>({2}, {1, 0}), Literal<int32_t>({2}, {2, 0})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "updates must not contain 0"));
  EXPECT_THAT(ReadVariable("divided_ints"), TensorIs<int32_t>({2}, {7, 8}));
  KernelRunner mul("ScatterMul");
  EXPECT_THAT(RunOk(mul, {Literal<int64_t>({3}, {1, 2, 3}), Literal<int32_t>({2}, {1, 1}),
                          Literal<int64_t>({2}, {4, 5})}),
              TensorIs<int64_t>({3}, {1, 40, 3}));
}

TEST(ScatterOpsTest, NdScattersAddressElementsAndRows) {
  const Tensor var = Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor indices = Literal<int32_t>({3, 2}, {2, 1, 0, 0, 2, 1});
  const Tensor updates = Literal<float>({3}, {10, -20, 30});
  const std::vector<std::pair<const char*, std::vector<float>>> want = {
      {"ResourceScatterNdUpdate", {-20, 2, 3, 4, 5, 30}},
      {"ResourceScatterNdAdd", {-19, 2, 3, 4, 5, 46}},
      {"ResourceScatterNdSub", {21, 2, 3, 4, 5, -34}},
      {"ResourceScatterNdMax", {1, 2, 3, 4, 5, 30}},
      {"ResourceScatterNdMin", {-20, 2, 3, 4, 5, 6}}};
  for (const auto& [op, values] : want) {
    const Tensor h = ResourceVariable(op, var);
    KernelRunner r(op);
    TW_ASSERT_OK_OR_FAIL(r.Run({h, indices, updates}));
    EXPECT_THAT(ReadVariable(op), TensorIs<float>({3, 2}, values)) << op;
  }
  // Index rows of depth 1 address whole rows.
  KernelRunner add("ScatterNdAdd");
  EXPECT_THAT(RunOk(add, {var, Literal<int32_t>({1, 1}, {1}), Literal<float>({1, 2}, {10, 20})}),
              TensorIs<float>({3, 2}, {1, 2, 13, 24, 5, 6}));
  KernelRunner update("ScatterNdUpdate");
  EXPECT_THAT(update.Run({var, Literal<int32_t>({1, 2}, {3, 0}), Literal<float>({1}, {1})})
                  .status()
                  .message(),
              HasSubstr("indices[0] = [3, 0] does not index into"));
  EXPECT_THAT(update.Run({var, Literal<int32_t>({1, 2}, {1, 0}), Literal<float>({2}, {1, 2})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
}

// v[1:3, ::2].assign(...) and v[0].assign(...) on a tf.Variable: TF 2.21's
// values and message; a refused assignment leaves the variable as it was.
TEST(ResourceOpsTest, StridedSliceAssignWritesTheVariablesSlice) {
  std::vector<float> start(12);
  for (int i = 0; i < 12; ++i) start[i] = static_cast<float>(i);
  const Tensor h = ResourceVariable("sliced", Literal<float>({3, 4}, start));
  const Tensor before = ReadVariable("sliced");  // shares the buffer: copied on write
  const Tensor begin = Literal<int32_t>({2}, {1, 0}), end = Literal<int32_t>({2}, {3, 4}),
               strides = Literal<int32_t>({2}, {1, 2});
  KernelRunner assign("ResourceStridedSliceAssign");
  TW_ASSERT_OK_OR_FAIL(
      assign.Run({h, begin, end, strides, Literal<float>({2, 2}, {-1, -2, -3, -4})}));
  EXPECT_THAT(ReadVariable("sliced"),
              TensorIs<float>({3, 4}, {0, 1, 2, 3, -1, 5, -2, 7, -3, 9, -4, 11}));
  EXPECT_THAT(before, TensorIs<float>({3, 4}, start));
  TW_ASSERT_OK_OR_FAIL(assign.Run({h, begin, end, strides, Literal<float>({2}, {-5, -6})}));
  EXPECT_THAT(ReadVariable("sliced"),
              TensorIs<float>({3, 4}, {0, 1, 2, 3, -5, 5, -6, 7, -5, 9, -6, 11}));
  KernelRunner row("ResourceStridedSliceAssign");
  row.Attr("shrink_axis_mask", int64_t{1});
  EXPECT_THAT(row.Run({h, Literal<int32_t>({1}, {0}), Literal<int32_t>({1}, {1}),
                       Literal<int32_t>({1}, {1}), Literal<float>({3}, {1, 2, 3})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Cannot broadcast input shape [3] into final shape [4]"));
  EXPECT_THAT(ReadVariable("sliced"),
              TensorIs<float>({3, 4}, {0, 1, 2, 3, -5, 5, -6, 7, -5, 9, -6, 11}));
  KernelRunner ref("StridedSliceAssign");
  ref.Attr("shrink_axis_mask", int64_t{1});
  EXPECT_THAT(RunOk(ref, {Literal<int32_t>({2, 2}, {1, 2, 3, 4}), Literal<int32_t>({1}, {1}),
                          Literal<int32_t>({1}, {2}), Literal<int32_t>({1}, {1}),
                          Literal<int32_t>({2}, {7, 8})}),
              TensorIs<int32_t>({2, 2}, {1, 2, 7, 8}));
}

// TF 2.21: the value before each step, then OutOfRange at the limit.
TEST(ResourceOpsTest, CountUpToStopsAtTheLimit) {
  const Tensor h = ResourceVariable("counter", Scalar<int64_t>(2));
  KernelRunner count("ResourceCountUpTo");
  count.Attr("limit", int64_t{3}).Attr("T", DT_INT64);
  EXPECT_THAT(RunOk(count, {h}), TensorIs<int64_t>({}, {2}));
  EXPECT_THAT(ReadVariable("counter"), TensorIs<int64_t>({}, {3}));
  EXPECT_THAT(count.Run({h}),
              testing::StatusIs(absl::StatusCode::kOutOfRange, "Reached limit of 3"));
  EXPECT_THAT(ReadVariable("counter"), TensorIs<int64_t>({}, {3}));
  KernelRunner ref("CountUpTo");
  ref.Attr("limit", int64_t{10});
  EXPECT_THAT(RunOk(ref, {Scalar<int32_t>(4)}), TensorIs<int32_t>({}, {4}));
  EXPECT_THAT(ref.Run({Literal<int32_t>({2}, {1, 2})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "input is not a scalar: [2]"));
  const Tensor w = ResourceVariable("gathered_nd", Literal<float>({2, 2}, {1, 2, 3, 4}));
  KernelRunner gather("ResourceGatherNd");
  gather.Attr("dtype", DT_FLOAT);
  EXPECT_THAT(RunOk(gather, {w, Literal<int32_t>({2, 2}, {1, 0, 0, 1})}),
              TensorIs<float>({2}, {3, 2}));
}

}  // namespace
}  // namespace towerflow
