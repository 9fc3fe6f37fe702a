// The special functions (special_math_ops.cc) against TensorFlow 2.21's
// values (tf.raw_ops on these inputs), in float and double, poles and
// out-of-domain inputs included.
#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename T>
Tensor Vec(const std::vector<double>& v) {
  return Literal<T>({static_cast<int64_t>(v.size())}, std::vector<T>(v.begin(), v.end()));
}

// Runs `op` on `inputs` (as T) and compares with `expected` (rtol `tol`,
// NaN and infinities exactly).
template <typename T>
void Check(const char* op, const std::vector<std::vector<double>>& inputs,
           const std::vector<double>& expected, double tol) {
  KernelRunner r(op);
  std::vector<Tensor> in;
  for (const auto& v : inputs) in.push_back(v.size() == 1 ? Literal<T>({}, {T(v[0])}) : Vec<T>(v));
  const Tensor out = RunOk(r, in);
  ASSERT_EQ(out.NumElements(), static_cast<int64_t>(expected.size())) << op;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double got = out.data<T>()[i], want = expected[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << op << "[" << i << "] = " << got;
    } else if (std::isinf(want)) {
      EXPECT_EQ(got, want) << op << "[" << i << "]";
    } else {
      EXPECT_NEAR(got, want, tol * std::max(1.0, std::abs(want))) << op << "[" << i << "]";
    }
  }
}

// Both types; the float reference (TF computes float in float) to 2e-6,
// the double one to 1e-12.
void CheckBoth(const char* op, const std::vector<std::vector<double>>& inputs,
               const std::vector<double>& f32, const std::vector<double>& f64) {
  Check<float>(op, inputs, f32, 2e-6);
  Check<double>(op, inputs, f64, 1e-12);
}

const std::vector<double> kX = {-2.5, -0.5, 0.5, 1, 2.5, 10, 0, -1};

TEST(SpecialFunctionsTest, GammaFamily) {
  CheckBoth("Lgamma", {kX},
            {-0.056243713945150375, 1.2655121088027954, 0.5723649263381958, 0.0,
             0.28468286991119385, 12.801827430725098, kInf, kInf},
            {-0.05624371649767407, 1.2655121234846454, 0.5723649429247001, 0.0, 0.2846828704729192,
             12.80182748008147, kInf, kInf});
  CheckBoth("Digamma", {kX},
            {1.1031568050384521, 0.03648996353149414, -1.9635107517242432, -0.5772159099578857,
             0.7031568288803101, 2.2517526149749756, kNaN, kNaN},
            {1.1031566406452433, 0.03648997397857645, -1.9635100260214227, -0.5772156649015323,
             0.7031566406452434, 2.2517525890667214, kNaN, kNaN});
  const std::vector<double> a = {0.5, 1, 2, 5, 0.5, -1, 0, 3}, x = {0.5, 2, 1, 3, 0, 1, 1, -1};
  CheckBoth("Igamma", {a, x},
            {0.6826895475387573, 0.8646647334098816, 0.26424112915992737, 0.18473678827285767, 0.0,
             kNaN, kNaN, kNaN},
            {0.682689492137086, 0.8646647167633873, 0.2642411176571153, 0.184736755476228, 0.0,
             kNaN, kNaN, kNaN});
  CheckBoth("Igammac", {a, x},
            {0.3173104524612427, 0.1353352814912796, 0.735758900642395, 0.8152632117271423, 1.0,
             kNaN, kNaN, kNaN},
            {0.31731050786291404, 0.1353352832366127, 0.7357588823428847, 0.815263244523772, 1.0,
             kNaN, kNaN, kNaN});
  CheckBoth("IgammaGradA", {a, x},
            {-0.6472004055976868, -0.2208254486322403, -0.2761960029602051, -0.13305675983428955,
             0.0, kNaN, kNaN, kNaN},
            {-0.6472003523777539, -0.22082542621185938, -0.27619604570283474, -0.13305676070192282,
             0.0, kNaN, kNaN, kNaN});
  CheckBoth("Polygamma", {{0, 1, 2, 3, 1.5, -1}, {0.5, 1, 2, 3, 1, 1}},
            {-1.9635107517242432, 1.644934058189392, -0.4041138291358948, 0.11893940716981888, kNaN,
             kNaN},
            {-1.9635100260214227, 1.6449340668482266, -0.4041138063191886, 0.11893940226682916,
             kNaN, kNaN});
  CheckBoth(
      "Zeta", {{2, 3, 1.5, 4, 1, 0.5}, {1, 2, 0.5, 3, 1, 1}},
      {1.644934058189392, 0.2020569145679474, 4.776537895202637, 0.019823234528303146, kInf, kNaN},
      {1.6449340668482266, 0.2020569031595943, 4.776537947554834, 0.019823233711138193, kInf,
       kNaN});
}

TEST(SpecialFunctionsTest, Betainc) {
  const std::vector<double> b = {0.5, 2, 3, 1, 2}, x = {0.2, 0.5, 0.9, 1, -0.5};
  CheckBoth("Betainc", {{0.5, 1, 2, 5, 2}, b, x},
            {0.2951672375202179, 0.75, 0.9962999820709229, 1.0, kNaN},
            {0.29516723530086664, 0.75, 0.9963, 1.0, kNaN});
  // A scalar broadcasts to the others' shape.
  CheckBoth("Betainc", {{2}, b, x}, {0.01613008603453636, 0.5, 0.9962999820709229, 1.0, kNaN},
            {0.01613008990009254, 0.5000000000000001, 0.9963, 1.0, kNaN});
  KernelRunner r("Betainc");
  EXPECT_THAT(r.Run({Vec<float>({1, 1}), Vec<float>({1, 1, 1}), Vec<float>({0.5, 0.5})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Shapes of a and b are inconsistent: [2] vs. [3]"));
}

TEST(SpecialFunctionsTest, InversesAndBessel) {
  CheckBoth("Erfinv", {{-0.99, -0.5, 0, 0.3, 0.9, 1, -1, 1.5}},
            {-1.821386456489563, -0.47693631052970886, 0.0, 0.2724626660346985, 1.1630871295928955,
             kInf, -kInf, kNaN},
            {-1.8213863677184496, -0.4769362762044699, 0.0, 0.27246271472675443, 1.1630871536766738,
             kInf, -kInf, kNaN});
  CheckBoth("Ndtri", {{0.01, 0.3, 0.5, 0.7, 0.99, 0, 1, 1.5}},
            {-2.326347827911377, -0.5244004726409912, 0.0, 0.5244004726409912, 2.326348304748535,
             -kInf, kInf, kNaN},
            {-2.3263478740408408, -0.5244005127080409, 0.0, 0.5244005127080407, 2.3263478740408408,
             -kInf, kInf, kNaN});
  const std::vector<double> x = {-3, -1, 0, 0.5, 2, 10};
  CheckBoth("BesselI0e", {x},
            {0.24300038814544678, 0.46575963497161865, 1.0, 0.6450353860855103, 0.30850833654403687,
             0.12783333659172058},
            {0.24300035416182536, 0.46575960759364043, 1.0, 0.6450352704491502, 0.308508322553671,
             0.1278333371634286});
  CheckBoth("BesselI1e", {x},
            {-0.1968267560005188, -0.207910418510437, 0.0, 0.15642082691192627, 0.2152693271636963,
             0.12126268446445465},
            {-0.19682671329730084, -0.20791041534970844, 0.0, 0.15642080318487162,
             0.2152692892489377, 0.12126268138445552});
}

// TF 2.21's values (tf.raw_ops). Eigen's functions, as TF's kernels: outside
// the domain Y is -inf (NaN for float Y1 at 0, as TF) and K is +inf.
TEST(SpecialFunctionsTest, BesselOfTheFirstAndSecondKinds) {
  const std::vector<double> j = {-3, -1, 0, 0.5, 2, 10}, p = {0.5, 1, 2, 10, 0, -1};
  CheckBoth("BesselJ0", {j},
            {-0.2600519061088562, 0.7651976943016052, 1.0, 0.9384698867797852, 0.22389079630374908,
             -0.24593573808670044},
            {-0.2600519549019335, 0.7651976865579665, 1.0, 0.938469807240813, 0.22389077914123562,
             -0.24593576445134832});
  CheckBoth("BesselJ1", {j},
            {-0.3390589654445648, -0.4400506019592285, 0.0, 0.24226847290992737, 0.5767248272895813,
             0.04347280412912369},
            {-0.33905895852593654, -0.44005058574493355, 0.0, 0.24226845767487387,
             0.5767248077568734, 0.04347274616886141});
  CheckBoth("BesselY0", {p},
            {-0.44451871514320374, 0.08825697004795074, 0.5103757381439209, 0.05567125231027603,
             -kInf, -kInf},
            {-0.4445187335067066, 0.08825696421567697, 0.5103756726497451, 0.05567116728359961,
             -kInf, -kInf});
  CheckBoth("BesselY1", {p},
            {-1.4714723825454712, -0.7812128067016602, -0.10703243315219879, 0.2490154355764389,
             kNaN, -kInf},
            {-1.4714723926702433, -0.7812128213002888, -0.10703243154093756, 0.24901542420695386,
             -kInf, -kInf});
  CheckBoth("BesselK0", {p},
            {0.924419105052948, 0.4210244417190552, 0.11389389634132385, 1.778006298991386e-05,
             kInf, kInf},
            {0.9244190712276663, 0.42102443824070823, 0.1138938727495335, 1.7780062316167654e-05,
             kInf, kInf});
  CheckBoth("BesselK1", {p},
            {1.6564409732818604, 0.6019073128700256, 0.13986587524414062, 1.8648774130269885e-05,
             kInf, kInf},
            {1.6564411200033013, 0.6019072301972348, 0.13986588181652243, 1.8648773453825582e-05,
             kInf, kInf});
  CheckBoth(
      "BesselK0e", {p},
      {1.5241093635559082, 1.144463062286377, 0.8415684103965759, 0.39163196086883545, kInf, kInf},
      {1.5241093857739103, 1.1444630798068947, 0.841568215070772, 0.39163193443659866, kInf, kInf});
  CheckBoth(
      "BesselK1e", {p},
      {2.7310094833374023, 1.6361536979675293, 1.0334768295288086, 0.4107665717601776, kInf, kInf},
      {2.7310097082117863, 1.6361534862632587, 1.0334768470686886, 0.4107665705957887, kInf, kInf});
}

TEST(SpecialFunctionsTest, DawsonExpintFresnelAndSpence) {
  // tf.math.special's, which TF computes with Cephes' approximations.
  const std::vector<double> x = {-3.5, -1, -0.25, 0, 0.3, 1, 2.5, 7, 25, 60};
  CheckBoth("Dawsn", {x},
            {-0.14962159097194672, -0.5380795001983643, -0.23983915150165558, 0.0,
             0.28263166546821594, 0.5380795001983643, 0.22308368980884552, 0.07218097895383835,
             0.020016038790345192, 0.008334491401910782},
            {-0.14962159308075648, -0.5380795069127684, -0.2398391635628982, 0.0,
             0.28263166502131193, 0.5380795069127684, 0.22308372216743552, 0.0721809746582363,
             0.02001603855446641, 0.00833449122332905});
  CheckBoth("Expint", {x},
            {kNaN, kNaN, kNaN, -kInf, -0.30266857147216797, 1.8951178789138794, 7.073765754699707,
             191.5047607421875, 3005950976.0, 1.9361822195371648e+24},
            {kNaN, kNaN, kNaN, -kInf, -0.30266853926582604, 1.895117816355937, 7.073765894578601,
             191.50474333550136, 3005950906.5255494, 1.9361822139292765e+24});
  CheckBoth("FresnelCos", {x},
            {-0.5325725078582764, -0.7798933982849121, -0.24975913763046265, 0.0,
             0.29940101504325867, 0.7798933982849121, 0.457412987947464, 0.5454670786857605,
             0.5127323865890503, 0.49999913573265076},
            {-0.5325724350280007, -0.779893400376823, -0.2497591503565432, 0.0, 0.2994009760520472,
             0.779893400376823, 0.45741300964177706, 0.5454670925469698, 0.5127323855397702,
             0.4999995309204995});
  CheckBoth("FresnelSin", {x},
            {-0.4152480661869049, -0.4382591247558594, -0.00817559938877821, 0.0,
             0.014116998761892319, 0.4382591247558594, 0.619181752204895, 0.4997049868106842,
             0.4999939799308777, 0.4946948289871216},
            {-0.41524801197243744, -0.4382591473903547, -0.008175600235777757, 0.0,
             0.014116998006576587, 0.4382591473903547, 0.6191817558195929, 0.4997047894534464,
             0.49999351546947596, 0.4946948353546973});
  CheckBoth("Spence", {x},
            {kNaN, kNaN, kNaN, 1.644934058189392, 0.8893775939941406, 0.0, -1.1473808288574219,
             -3.08994197845459, -6.653707027435303, -9.94121265411377},
            {kNaN, kNaN, kNaN, 1.6449340668482264, 0.8893776242860388, 0.0, -1.1473806603755703,
             -3.089942051088032, -6.653706648200206, -9.941212000072792});
  // The edges, as TF's: Dawsn past 3.25e8 drops the sign, Fresnel past
  // 36974 is +-1/2, Expint and Spence of +Inf are NaN.
  const std::vector<double> e = {kNaN, kInf, -kInf, 1e-300, 36975, 1e10, -1e10};
  Check<double>("Dawsn", {e}, {kNaN, 0, 0, 1e-300, 1.35226504444317e-05, 5e-11, 5e-11}, 1e-12);
  Check<double>("Expint", {e}, {kNaN, kNaN, kNaN, -690.1983122333121, kInf, kInf, kNaN}, 1e-12);
  Check<double>("FresnelCos", {e}, {kNaN, 0.5, -0.5, 1e-300, 0.5, 0.5, -0.5}, 1e-12);
  Check<double>("FresnelSin", {e}, {kNaN, 0.5, -0.5, 0, 0.5, 0.5, -0.5}, 1e-12);
  Check<double>(
      "Spence", {e},
      {kNaN, kNaN, kNaN, 1.6449340668482264, -56.95875602587604, -266.73983958836556, kNaN}, 1e-12);
}

}  // namespace
}  // namespace towerflow
