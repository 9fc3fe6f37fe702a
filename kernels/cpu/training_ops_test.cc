// The optimizer updates beside the first five (kernels/cpu/training_ops.cc,
// more_training_ops.cc) against TensorFlow 2.21: each runs on resource variables (and its ref form
// where TF has one), and the variables after the steps are TF's
// (tf.raw_ops.ResourceApply* on the same values), to float rounding.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

const Tensor& Var0() {
  static const Tensor* t = new Tensor(Literal<float>({4}, {1, -2, 0.5f, 3}));
  return *t;
}
const Tensor& Grad() {
  static const Tensor* t = new Tensor(Literal<float>({4}, {0.3f, -1.2f, 0, 2.5f}));
  return *t;
}

// Resource variables `name`/0 (var, from `var`) and `name`/k (the slots),
// then `op` run `steps` times on them with `scalars` placed as the op's
// inputs after them (the gradient among them); the variables' values.
struct Update {
  std::string op;
  std::vector<Tensor> slots;
  // The op's inputs after the variables; a default-constructed Tensor
  // stands for the gradient.
  std::vector<Tensor> rest;
  std::vector<std::pair<std::string, AttrValue>> attrs = {};
  Tensor grad = Grad();
  Tensor var = Var0();
  Tensor indices = Tensor();  // sparse forms: inserted after the gradient
};

absl::StatusOr<std::vector<Tensor>> RunSteps(const std::string& name, const Update& u, int steps) {
  std::vector<Tensor> inputs = {ResourceVariable(name + "/0", u.var)};
  for (size_t k = 0; k < u.slots.size(); ++k) {
    inputs.push_back(ResourceVariable(absl::StrCat(name, "/", k + 1), u.slots[k]));
  }
  for (const Tensor& t : u.rest) {
    if (t.dtype() != DT_INVALID) {
      inputs.push_back(t);
      continue;
    }
    inputs.push_back(u.grad);
    if (u.indices.dtype() != DT_INVALID) inputs.push_back(u.indices);
  }
  KernelRunner r(u.op);
  for (const auto& [attr, value] : u.attrs) r.Attr(attr, value);
  for (int s = 0; s < steps; ++s) TW_RETURN_IF_ERROR(r.Run(inputs).status());
  std::vector<Tensor> out;
  for (size_t k = 0; k <= u.slots.size(); ++k)
    out.push_back(ReadVariable(absl::StrCat(name, "/", k)));
  return out;
}

Tensor F(std::vector<float> v) { return Literal<float>({static_cast<int64_t>(v.size())}, v); }
Tensor S(float v) { return Scalar<float>(v); }
AttrValue A(bool b) {
  AttrValue a;
  a.set_b(b);
  return a;
}

void ExpectSteps(const std::string& name, const Update& u, int steps,
                 const std::vector<std::vector<float>>& expected, double tolerance = 2e-6) {
  absl::StatusOr<std::vector<Tensor>> out = RunSteps(name, u, steps);
  ASSERT_TRUE(out.ok()) << name << ": " << out.status();
  ASSERT_EQ(out->size(), expected.size()) << name;
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_THAT((*out)[k],
                TensorNear(Literal<float>((*out)[k].shape(), expected[k]), tolerance, 2e-6))
        << name << " variable " << k;
  }
}

const Tensor kGrad;  // where the gradient goes among the inputs

TEST(TrainingOpsTest, KerasMomentumAsTensorFlow) {
  const Update plain{
      "ResourceApplyKerasMomentum", {F({0.1f, 0.2f, 0, -0.3f})}, {S(0.1f), kGrad, S(0.9f)}};
  ExpectSteps("keras_momentum", plain, 2,
              {{1.084f, -1.31f, 0.5f, 1.762f}, {0.024f, 0.39f, 0, -0.718f}});
  Update nesterov = plain;
  nesterov.attrs = {{"use_nesterov", A(true)}};
  ExpectSteps("keras_nesterov", nesterov, 2,
              {{1.0156001f, -1.1389999f, 0.5f, 1.3858001f}, {0.024f, 0.39f, 0, -0.718f}});
}

TEST(TrainingOpsTest, AdagradV2AdadeltaAdaMaxAsTensorFlow) {
  ExpectSteps("adagrad_v2",
              {"ResourceApplyAdagradV2", {F({0.1f, 0.1f, 0.1f, 0.1f})}, {S(0.1f), S(1e-7f), kGrad}},
              2, {{0.8744806f, -1.8337871f, 0.5f, 2.8303609f}, {0.28f, 2.98f, 0.1f, 12.6f}});
  ExpectSteps("adadelta",
              {"ResourceApplyAdadelta",
               {F({0, 0, 0, 0}), F({0, 0, 0, 0})},
               {S(1), S(0.95f), S(1e-6f), kGrad}},
              2,
              {{0.99099976f, -1.9909987f, 0.5f, 2.991f},
               {0.008775002f, 0.14040004f, 0, 0.6093751f},
               {1.9751997e-06f, 1.9756137e-06f, 0, 1.9756346e-06f}},
              1e-9);
  ExpectSteps("adamax",
              {"ResourceApplyAdaMax",
               {F({0, 0, 0, 0}), F({0, 0, 0, 0})},
               {S(0.9f), S(0.01f), S(0.9f), S(0.999f), S(1e-7f), kGrad}},
              2,
              {{0.971f, -1.971f, 0.5f, 2.971f},
               {0.057000019f, -0.22800007f, 0, 0.47500011f},
               {0.3f, 1.2f, 0, 2.5f}});
}

TEST(TrainingOpsTest, CenteredRmsPropAndAmsgradAsTensorFlow) {
  ExpectSteps("centered_rmsprop",
              {"ResourceApplyCenteredRMSProp",
               {F({0, 0, 0, 0}), F({1, 1, 1, 1}), F({0, 0, 0, 0})},
               {S(0.01f), S(0.9f), S(0.5f), S(1e-7f), kGrad}},
              2,
              {{0.99197263f, -1.9704459f, 0.5f, 2.9502101f},
               {0.057000019f, -0.22800007f, 0, 0.47500011f},
               {0.8271f, 1.0836f, 0.80999994f, 1.9975002f},
               {0.0048792651f, -0.017727809f, 0, 0.02911743f}});
  // vhat starts above v in the first coordinate, which holds var there.
  ExpectSteps("amsgrad",
              {"ResourceApplyAdamWithAmsgrad",
               {F({0, 0, 0, 0}), F({0, 0, 0, 0}), F({0.5f, 0, 0, 0})},
               {S(0.9f), S(0.999f), S(0.01f), S(0.9f), S(0.999f), S(1e-7f), kGrad}},
              2,
              {{0.9996109f, -1.9765617f, 0.5f, 2.9765615f},
               {0.057000019f, -0.22800007f, 0, 0.47500011f},
               {0.00017990769f, 0.002878523f, 0, 0.01249359f},
               {0.5f, 0.002878523f, 0, 0.01249359f}},
              1e-8);
}

// FTRL with lr_power -0.5 (the square-root path) and -0.7 (pow), with and
// without multiply_linear_by_lr, and V2's shrinkage; the third coordinate's
// zero gradient keeps |linear| under l1, so its weight is 0.
TEST(TrainingOpsTest, FtrlAsTensorFlow) {
  const Update ftrl{"ResourceApplyFtrl",
                    {F({0.1f, 0.1f, 0.1f, 0.1f}), F({0, 0, 0, 0})},
                    {kGrad, S(0.1f), S(0.05f), S(0.01f), S(-0.5f)}};
  const std::vector<float> accum = {0.28f, 2.98f, 0.1f, 12.6f};
  ExpectSteps("ftrl", ftrl, 2,
              {{0.13685994f, -1.3179553f, 0, 2.4499426f},
               accum,
               {-0.77693188f, 22.827793f, 0, -87.063339f}},
              2e-5);
  Update by_lr = ftrl;
  by_lr.attrs = {{"multiply_linear_by_lr", A(true)}};
  ExpectSteps("ftrl_by_lr", by_lr, 2,
              {{0.13685995f, -1.3179551f, 0, 2.4499428f},
               accum,
               {-0.077693194f, 2.2827795f, 0, -8.7063341f}},
              2e-5);
  Update power = ftrl;
  power.rest.back() = S(-0.7f);
  ExpectSteps(
      "ftrl_power", power, 2,
      {{0.17562892f, -1.554439f, 0, 2.7220209f}, accum, {-0.7739672f, 33.464062f, 0, -160.48468f}},
      5e-5);
  const Update v2{"ResourceApplyFtrlV2",
                  {F({0.1f, 0.1f, 0.1f, 0.1f}), F({0, 0, 0, 0})},
                  {kGrad, S(0.1f), S(0.05f), S(0.01f), S(0.2f), S(-0.5f)}};
  ExpectSteps("ftrl_v2", v2, 2,
              {{0.037831776f, -1.2229723f, -0.041211233f, 2.3745108f},
               accum,
               {-0.25094357f, 21.186234f, 0.18114558f, -84.384262f}},
              2e-5);
  // The ref form, one step, the same arithmetic.
  KernelRunner ref("ApplyFtrl");
  EXPECT_THAT(RunOk(ref, {Var0(), F({0.1f, 0.1f, 0.1f, 0.1f}), F({0, 0, 0, 0}), Grad(), S(0.1f),
                          S(0.05f), S(0.01f), S(-0.5f)}),
              TensorNear<float>({4}, {0.19334112f, -1.3873888f, 0, 2.5203326f}, 2e-6));
}

// The sparse forms on rows [3, 2]: KerasMomentum and AdagradV2 update row 2
// twice (a duplicate index), FTRL rows 2 and 0.
TEST(TrainingOpsTest, SparseFormsAsTensorFlow) {
  const Tensor var = Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor grad = Literal<float>({2, 2}, {0.5f, -1, 2, 0.25f});
  const Tensor tenths = Literal<float>({3, 2}, {0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f});
  const Tensor zeros = Literal<float>({3, 2}, {0, 0, 0, 0, 0, 0});
  const Tensor twice = Literal<int32_t>({2}, {2, 2}), two_rows = Literal<int32_t>({2}, {2, 0});
  Update u{"ResourceSparseApplyKerasMomentum", {tenths}, {S(0.1f), kGrad, S(0.9f)}};
  u.var = var, u.grad = grad, u.indices = twice;
  ExpectSteps("sparse_keras", u, 1,
              {{1, 2, 3, 4, 4.876f, 6.336f}, {0.1f, 0.1f, 0.1f, 0.1f, -0.164f, 0.146f}});
  u = {"ResourceSparseApplyAdagradV2", {tenths}, {S(0.1f), S(1e-7f), kGrad}};
  u.var = var, u.grad = grad, u.indices = twice;
  ExpectSteps("sparse_adagrad_v2", u, 1,
              {{1, 2, 3, 4, 4.8195915f, 6.0721593f}, {0.1f, 0.1f, 0.1f, 0.1f, 4.35f, 1.1625f}});
  u = {"ResourceSparseApplyFtrl", {tenths, zeros}, {kGrad, S(0.1f), S(0.05f), S(0.01f), S(-0.5f)}};
  u.var = var, u.grad = grad, u.indices = two_rows;
  ExpectSteps("sparse_ftrl", u, 1,
              {{0.74185115f, 0.35488936f, 3, 4, 2.2268925f, 4.2733617f},
               {4.1f, 0.1625f, 0.1f, 0.1f, 0.35f, 1.1f},
               {-15.086178f, -1.4877025f, 0, 0, -13.269011f, -44.954861f}},
              2e-5);
  u = {"ResourceSparseApplyFtrlV2",
       {tenths, zeros},
       {kGrad, S(0.1f), S(0.05f), S(0.01f), S(0.2f), S(-0.5f)}};
  u.var = var, u.grad = grad, u.indices = two_rows;
  ExpectSteps("sparse_ftrl_v2", u, 1,
              {{0.72211611f, 0.15741354f, 3, 4, 1.8899697f, 4.0449662f},
               {4.1f, 0.1625f, 0.1f, 0.1f, 0.35f, 1.1f},
               {-14.686178f, -0.68770254f, 0, 0, -11.269011f, -42.554859f}},
              2e-5);
  // The sparse FTRL refuses a non-positive lr, as TF's (the dense one, as
  // TF's, does not).
  u = {"ResourceSparseApplyFtrl", {tenths, zeros}, {kGrad, S(-0.1f), S(0.05f), S(0.01f), S(-0.5f)}};
  u.var = var, u.grad = grad, u.indices = two_rows;
  EXPECT_THAT(RunSteps("sparse_ftrl_bad", u, 1),
              StatusIs(absl::StatusCode::kInvalidArgument, "lr is not a positive scalar: []"));
}

// tf.compat.v1.train's proximal, sign and dual-averaging updates
// (kernels/cpu/more_training_ops.cc), two steps each.
TEST(TrainingOpsTest, ProximalSignAndDualAveragingAsTensorFlow) {
  const Update pgd{"ResourceApplyProximalGradientDescent", {}, {S(0.1f), S(0.05f), S(0.2f), kGrad}};
  ExpectSteps(
      "pgd", pgd, 2,
      {{0.8932141661643982f, -1.6796425580978394f, 0.4708766043186188f, 2.3884081840515137f}});
  Update pgd_l2 = pgd;
  pgd_l2.rest[1] = S(0);
  ExpectSteps(
      "pgd_l2", pgd_l2, 2,
      {{0.9029220342636108f, -1.6893502473831177f, 0.48058441281318665f, 2.39811635017395f}});
  const std::vector<float> accum = {0.28f, 2.98f, 0.1f, 12.6f};
  const Update padagrad{"ResourceApplyProximalAdagrad",
                        {F({0.1f, 0.1f, 0.1f, 0.1f})},
                        {S(0.1f), S(0.05f), S(0.2f), kGrad}};
  ExpectSteps("padagrad", padagrad, 2,
              {{0.7835958003997803f, -1.776159405708313f, 0.41342848539352417f, 2.788431406021118f},
               accum});
  Update padagrad_l2 = padagrad;
  padagrad_l2.rest[1] = S(0);
  ExpectSteps("padagrad_l2", padagrad_l2, 2,
              {{0.8032689094543457f, -1.782942295074463f, 0.4422856867313385f, 2.7917895317077637f},
               accum});
  const std::vector<float> m = {0.1380000114440918f, -0.0660000741481781f, 0, 0.23200009763240814f};
  const Update add_sign{"ResourceApplyAddSign",
                        {F({0.1f, 0.2f, 0, -0.3f})},
                        {S(0.1f), S(1), S(0.9f), S(0.9f), kGrad}};
  ExpectSteps("add_sign", add_sign, 2, {{0.8860000371932983f, -1.76f, 0.5f, 2.5f}, m});
  Update power_sign = add_sign;
  power_sign.op = "ResourceApplyPowerSign";
  power_sign.rest[1] = S(0.6931472f);  // logbase: ln 2
  ExpectSteps("power_sign", power_sign, 2,
              {{0.8880360126495361f, -1.7117656469345093f, 0.5f, 2.3995118141174316f}, m});
  const std::vector<float> g_acc = {0.6f, -2.4f, 0, 5}, gg_acc = accum;
  const Update da{"ResourceApplyAdagradDA",
                  {F({0, 0, 0, 0}), F({0.1f, 0.1f, 0.1f, 0.1f})},
                  {kGrad, S(0.1f), S(0.05f), S(0.2f), Scalar<int64_t>(3)}};
  ExpectSteps(
      "adagrad_da", da, 2,
      {{-0.07638119906187057f, 0.12596096098423004f, 0, -0.134362131357193f}, g_acc, gg_acc});
  Update da_l2 = da;
  da_l2.rest[2] = S(0);
  ExpectSteps(
      "adagrad_da_l2", da_l2, 2,
      {{-0.10184159874916077f, 0.13435836136341095f, 0, -0.13851767778396606f}, g_acc, gg_acc});
  // The ref form, and the checks of the scalars (global_step an int64) by
  // the shape function, before the kernel's.
  KernelRunner ref("ApplyProximalGradientDescent");
  EXPECT_THAT(
      RunOk(ref, {Var0(), S(0.1f), S(0.05f), S(0.2f), Grad()}),
      TensorNear<float>(
          {4}, {0.9460784792900085f, -1.8382353782653809f, 0.4852941334247589f, 2.691176414489746f},
          2e-6));
  Update bad_lr = da;
  bad_lr.rest[1] = F({0.1f, 0.2f});
  EXPECT_THAT(RunSteps("bad_lr", bad_lr, 1),
              StatusIs(absl::StatusCode::kInvalidArgument, "lr must be a scalar, got shape [2]"));
  Update bad_step = da;
  bad_step.rest[4] = Literal<int64_t>({1}, {3});
  EXPECT_THAT(RunSteps("bad_step", bad_step, 1),
              StatusIs(absl::StatusCode::kInvalidArgument, "global_step must be a scalar, got shape [1]"));
}

// Their sparse forms, and those of Adadelta and centered RMSProp, on rows
// [3, 2]: the indices name row 2 twice, or rows 2 and 0.
TEST(TrainingOpsTest, MoreSparseFormsAsTensorFlow) {
  const Tensor var = Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor grad = Literal<float>({2, 2}, {0.5f, -1, 2, 0.25f});
  const Tensor tenths = Literal<float>({3, 2}, {0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f});
  const Tensor zeros = Literal<float>({3, 2}, {0, 0, 0, 0, 0, 0});
  const Tensor twice = Literal<int32_t>({2}, {2, 2}), two_rows = Literal<int32_t>({2}, {2, 0});
  Update u{"ResourceSparseApplyProximalGradientDescent", {}, {S(0.1f), S(0.05f), S(0.2f), kGrad}};
  u.var = var, u.grad = grad, u.indices = two_rows;
  ExpectSteps(
      "sparse_pgd", u, 1,
      {{0.779411792755127f, 1.9313726425170898f, 3, 4, 4.848039150238037f, 5.975490093231201f}});
  u = {"ResourceSparseApplyProximalAdagrad", {tenths}, {S(0.1f), S(0.05f), S(0.2f), kGrad}};
  u.var = var, u.grad = grad, u.indices = twice;
  ExpectSteps("sparse_padagrad", u, 1,
              {{1, 2, 3, 4, 4.604128837585449f, 5.840447425842285f},
               {0.1f, 0.1f, 0.1f, 0.1f, 4.349999904632568f, 1.162500023841858f}});
  u = {"ResourceSparseApplyAdagradDA",
       {zeros, tenths},
       {kGrad, S(0.1f), S(0.05f), S(0.2f), Scalar<int64_t>(3)}};
  u.var = var, u.grad = grad, u.indices = two_rows;
  ExpectSteps("sparse_adagrad_da", u, 1,
              {{-0.08873559534549713f, -0.021593008190393448f, 3, 4, -0.05371328070759773f,
                0.07665884494781494f},
               {2, 0.25f, 0, 0, 0.5f, -1},
               {4.1f, 0.1625f, 0.1f, 0.1f, 0.35f, 1.1f}});
  u = {"ResourceSparseApplyAdadelta", {tenths, tenths}, {S(1), S(0.95f), S(1e-6f), kGrad}};
  u.var = var, u.grad = grad, u.indices = twice;
  ExpectSteps("sparse_adadelta", u, 1,
              {{1, 2, 3, 4, 3.329601287841797f, 6.5907769203186035f},
               {0.1f, 0.1f, 0.1f, 0.1f, 0.3021250367164612f, 0.14087501168251038f},
               {0.1f, 0.1f, 0.1f, 0.1f, 0.1718822419643402f, 0.12588101625442505f}});
  u = {"ResourceSparseApplyCenteredRMSProp",
       {zeros, tenths, zeros},
       {S(0.1f), S(0.9f), S(0.5f), S(1e-6f), kGrad}};
  u.var = var, u.grad = grad, u.indices = two_rows;
  ExpectSteps(
      "sparse_centered_rms_prop", u, 1,
      {{0.7018579244613647f, 1.919155240058899f, 3, 4, 4.850929260253906f, 6.235701560974121f},
       {0.2f, 0.025f, 0, 0, 0.05f, -0.1f},
       {0.49f, 0.09625f, 0.1f, 0.1f, 0.115f, 0.19f},
       {0.29814204573631287f, 0.08084478974342346f, 0, 0, 0.14907054603099823f,
        -0.23570159077644348f}});
  // One element per row (TF's scalar path).
  u = {"ResourceSparseApplyProximalAdagrad",
       {F({0.1f, 0.1f, 0.1f, 0.1f})},
       {S(0.1f), S(0.05f), S(0.2f), kGrad}};
  u.grad = F({0.3f, -1.2f}), u.indices = Literal<int32_t>({2}, {3, 1});
  ExpectSteps("sparse_padagrad_1d", u, 1,
              {{1, -1.8691480159759521f, 0.5f, 2.791616201400757f}, {0.1f, 1.54f, 0.1f, 0.19f}});
  u = {"ResourceSparseApplyProximalGradientDescent", {}, {S(0.1f), S(0.05f), S(0.2f), kGrad}};
  u.var = var, u.grad = grad, u.indices = Literal<int32_t>({2}, {3, 0});
  EXPECT_THAT(RunSteps("sparse_out_of_range", u, 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Index 3 at offset 0 in indices is out of range"));
}

}  // namespace
}  // namespace towerflow
