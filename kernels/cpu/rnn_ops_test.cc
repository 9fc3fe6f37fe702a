// The fused recurrent cells and their gradient ops against TensorFlow 2.21
// (tf.raw_ops on these random inputs), to float rounding: both run Eigen's
// GEMM and the same gate arithmetic. TF leaves BlockLSTM's steps past
// seq_len_max uninitialized; here they are zeros.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

struct LstmInputs {
  Tensor x =
      Literal<float>({2, 3}, {1.632735252380371f, -2.044532060623169f, 0.33447906374931335f,
                              -0.4542156755924225f, -0.3621194362640381f, -0.17247773706912994f});
  Tensor cs = Literal<float>({2, 2}, {-1.009993076324463f, -0.11596618592739105f,
                                      -0.4326065480709076f, 1.6614997386932373f});
  Tensor h = Literal<float>({2, 2}, {0.11289330571889877f, -0.17631539702415466f,
                                     -0.14064371585845947f, -0.3340231776237488f});
  Tensor w = Literal<float>(
      {5, 8},
      {-0.4220602214336395f,  -0.15632039308547974f, 0.19277815520763397f,  -0.0954214408993721f,
       0.38310348987579346f,  -0.07992085069417953f, 0.009703826159238815f, 0.618328332901001f,
       0.21804220974445343f,  -0.2020915001630783f,  -0.07313559204339981f, 0.21621005237102509f,
       0.7740352153778076f,   -0.10784813016653061f, -0.09742347151041031f, 0.4009254276752472f,
       -0.3545839786529541f,  -0.11668809503316879f, 0.35301560163497925f,  0.23214000463485718f,
       0.03660668060183525f,  0.268041729927063f,    -1.1312649250030518f,  0.40852272510528564f,
       -0.3838579058647156f,  -0.6674479246139526f,  0.11057830601930618f,  0.2802179455757141f,
       -0.17790697515010834f, -0.4305623471736908f,  0.01044993381947279f,  -0.021098922938108444f,
       0.5622392892837524f,   0.29896318912506104f,  0.07752625644207001f,  0.4446532726287842f,
       -0.08220922201871872f, -0.3703598380088806f,  0.23362332582473755f,  0.23301537334918976f});
  Tensor b =
      Literal<float>({8}, {-0.021482890471816063f, -0.07828085869550705f, 0.022915391251444817f,
                           -0.2493894249200821f, 0.06901247799396515f, 0.049136824905872345f,
                           -0.1638857126235962f, 0.006135351024568081f});
  Tensor wci = Literal<float>({2}, {0.1f, -0.2f});
  Tensor wcf = Literal<float>({2}, {0.3f, 0.05f});
  Tensor wco = Literal<float>({2}, {-0.15f, 0.25f});
  Tensor xs = Literal<float>(
      {3, 2, 3},
      {-0.7712797522544861f, 0.605776846408844f, -1.6273337602615356f, -0.7315956354141235f,
       0.5676639676094055f, 0.9251208305358887f, -1.7264043092727661f, -0.3984318673610687f,
       0.2624160647392273f, -0.48737290501594543f, 1.2725121974945068f, -0.9529813528060913f,
       0.2836255431175232f, -0.8387244343757629f, 1.1247704029083252f, -0.017320983111858368f,
       -0.2978004515171051f, -1.3745479583740234f});
};

TEST(RnnOpsTest, LstmBlockCellMatchesTensorFlow) {
  const LstmInputs in;
  KernelRunner r("LSTMBlockCell");
  r.Attr("forget_bias", 1.0f).Attr("cell_clip", 3.0f).Attr("use_peephole", false);
  auto out = r.Run({in.x, in.cs, in.h, in.w, in.wci, in.wcf, in.wco, in.b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0],
              TensorNear(Literal<float>({2, 2}, {0.19506052136421204f, 0.4781588912010193f,
                                                 0.5046524405479431f, 0.519999623298645f}),
                         2e-6, 1e-6))
      << "i";
  EXPECT_THAT((*out)[1],
              TensorNear(Literal<float>({2, 2}, {-0.4295926094055176f, -0.4118894636631012f,
                                                 -0.3557255268096924f, 1.0497649908065796f}),
                         2e-6, 1e-6))
      << "cs";
  EXPECT_THAT((*out)[2],
              TensorNear(Literal<float>({2, 2}, {0.5296236276626587f, 0.776518702507019f,
                                                 0.6594569683074951f, 0.7794605493545532f}),
                         2e-6, 1e-6))
      << "f";
  EXPECT_THAT((*out)[3],
              TensorNear(Literal<float>({2, 2}, {0.40920504927635193f, 0.5717936754226685f,
                                                 0.49564969539642334f, 0.3623386323451996f}),
                         2e-6, 1e-6))
      << "o";
  EXPECT_THAT((*out)[4],
              TensorNear(Literal<float>({2, 2}, {0.5399534702301025f, -0.6730807423591614f,
                                                 -0.13958145678043365f, -0.4717475175857544f}),
                         2e-6, 1e-6))
      << "ci";
  EXPECT_THAT((*out)[5],
              TensorNear(Literal<float>({2, 2}, {-0.40498077869415283f, -0.3900758624076843f,
                                                 -0.3414434492588043f, 0.7817150354385376f}),
                         2e-6, 1e-6))
      << "co";
  EXPECT_THAT((*out)[6],
              TensorNear(Literal<float>({2, 2}, {-0.16572017967700958f, -0.22304290533065796f,
                                                 -0.16923634707927704f, 0.2832455635070801f}),
                         2e-6, 1e-6))
      << "h";
  KernelRunner p("LSTMBlockCell");
  p.Attr("forget_bias", 0.5f).Attr("cell_clip", 0.2f).Attr("use_peephole", true);
  out = p.Run({in.x, in.cs, in.h, in.w, in.wci, in.wcf, in.wco, in.b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0],
              TensorNear(Literal<float>({2, 2}, {0.17968890070915222f, 0.48394879698753357f,
                                                 0.49383771419525146f, 0.4372676610946655f}),
                         2e-6, 1e-6))
      << "i";
  EXPECT_THAT((*out)[1],
              TensorNear(Literal<float>({2, 2}, {-0.20000000298023224f, -0.20000000298023224f,
                                                 -0.20000000298023224f, 0.20000000298023224f}),
                         2e-6, 1e-6))
      << "cs";
  EXPECT_THAT((*out)[2],
              TensorNear(Literal<float>({2, 2}, {0.3352879583835602f, 0.6769291162490845f,
                                                 0.50777268409729f, 0.6996434330940247f}),
                         2e-6, 1e-6))
      << "f";
  EXPECT_THAT((*out)[3],
              TensorNear(Literal<float>({2, 2}, {0.4164770245552063f, 0.5595098733901978f,
                                                 0.5031495094299316f, 0.3739687204360962f}),
                         2e-6, 1e-6))
      << "o";
  EXPECT_THAT((*out)[4],
              TensorNear(Literal<float>({2, 2}, {0.5399534702301025f, -0.6730807423591614f,
                                                 -0.13958145678043365f, -0.4717475175857544f}),
                         2e-6, 1e-6))
      << "ci";
  EXPECT_THAT((*out)[5],
              TensorNear(Literal<float>({2, 2}, {-0.1973753273487091f, -0.1973753273487091f,
                                                 -0.1973753273487091f, 0.1973753273487091f}),
                         2e-6, 1e-6))
      << "co";
  EXPECT_THAT((*out)[6],
              TensorNear(Literal<float>({2, 2}, {-0.08220228552818298f, -0.11043344438076019f,
                                                 -0.0993092954158783f, 0.07381220161914825f}),
                         2e-6, 1e-6))
      << "h";
  EXPECT_THAT(r.Run({in.x, in.cs, in.h, Literal<float>({4, 8}, std::vector<float>(32, 0)), in.wci,
                     in.wcf, in.wco, in.b}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "w.dim_size(0) != input_size + cell_size: 4 vs. 5"));
  EXPECT_THAT(
      r.Run({in.x, Literal<float>({1, 2}, {0, 0}), in.h, in.w, in.wci, in.wcf, in.wco, in.b}),
      StatusIs(absl::StatusCode::kInvalidArgument, "cs_prev.dims(0) != batch_size: 1 vs. 2"));
}

TEST(RnnOpsTest, BlockLstmMatchesTensorFlow) {
  const LstmInputs in;
  KernelRunner r("BlockLSTM");
  r.Attr("use_peephole", true);
  auto out = r.Run({Scalar<int64_t>(2), in.xs, in.cs, in.h, in.w, in.wci, in.wcf, in.wco, in.b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(
      (*out)[0],
      TensorNear(Literal<float>({3, 2, 2},
                                {0.6834536790847778f, 0.501221239566803f, 0.4765077531337738f,
                                 0.37171265482902527f, 0.6539181470870972f, 0.6772379875183105f,
                                 0.7487860918045044f, 0.444133996963501f, 0.0f, 0.0f, 0.0f, 0.0f}),
                 2e-6, 1e-6))
      << "i";
  EXPECT_THAT((*out)[1],
              TensorNear(Literal<float>(
                             {3, 2, 2},
                             {-1.145034909248352f, -0.29477936029434204f, -0.2717973291873932f,
                              1.3622335195541382f, -0.7154381275177002f, -0.4666735529899597f,
                              -0.5558983683586121f, 0.9083350896835327f, 0.0f, 0.0f, 0.0f, 0.0f}),
                         2e-6, 1e-6))
      << "cs";
  EXPECT_THAT(
      (*out)[2],
      TensorNear(Literal<float>({3, 2, 2},
                                {0.7056326270103455f, 0.6502520442008972f, 0.7657904028892517f,
                                 0.8265965580940247f, 0.4738139510154724f, 0.8338325023651123f,
                                 0.8477766513824463f, 0.6436822414398193f, 0.0f, 0.0f, 0.0f, 0.0f}),
                 2e-6, 1e-6))
      << "f";
  EXPECT_THAT(
      (*out)[3],
      TensorNear(Literal<float>({3, 2, 2},
                                {0.8509792685508728f, 0.2670070230960846f, 0.2122223824262619f,
                                 0.6046757698059082f, 0.4118073284626007f, 0.22552922368049622f,
                                 0.7295145392417908f, 0.5442523956298828f, 0.0f, 0.0f, 0.0f, 0.0f}),
                 2e-6, 1e-6))
      << "o";
  EXPECT_THAT((*out)[4],
              TensorNear(Literal<float>(
                             {3, 2, 2},
                             {-0.6325970888137817f, -0.43767520785331726f, 0.12484293431043625f,
                              -0.0300136785954237f, -0.26441317796707153f, -0.326143741607666f,
                              -0.4346701204776764f, 0.07090099900960922f, 0.0f, 0.0f, 0.0f, 0.0f}),
                         2e-6, 1e-6))
      << "ci";
  EXPECT_THAT((*out)[5],
              TensorNear(Literal<float>(
                             {3, 2, 2},
                             {-0.8161026239395142f, -0.2865277826786041f, -0.26529648900032043f,
                              0.8769100308418274f, -0.6140756607055664f, -0.43550771474838257f,
                              -0.5049278736114502f, 0.7203322649002075f, 0.0f, 0.0f, 0.0f, 0.0f}),
                         2e-6, 1e-6))
      << "co";
  EXPECT_THAT((*out)[6],
              TensorNear(Literal<float>(
                             {3, 2, 2},
                             {-0.6944864392280579f, -0.07650493085384369f, -0.05630185455083847f,
                              0.5302462577819824f, -0.25288087129592896f, -0.09821971505880356f,
                              -0.3683522343635559f, 0.3920425474643707f, 0.0f, 0.0f, 0.0f, 0.0f}),
                         2e-6, 1e-6))
      << "h";
  KernelRunner v2("BlockLSTMV2");
  out = v2.Run({Scalar<int64_t>(3), in.xs, in.cs, in.h, in.w, in.wci, in.wcf, in.wco, in.b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(
      (*out)[0],
      TensorNear(Literal<float>({3, 2, 2},
                                {0.7048889398574829f, 0.4954230785369873f, 0.4873083531856537f,
                                 0.4520041346549988f, 0.6354820132255554f, 0.582457959651947f,
                                 0.737205982208252f, 0.4957490563392639f, 0.34654518961906433f,
                                 0.5125675797462463f, 0.5920645594596863f, 0.4963451325893402f}),
                 2e-6, 1e-6))
      << "i";
  EXPECT_THAT((*out)[1],
              TensorNear(Literal<float>(
                             {3, 2, 2},
                             {-0.20130780339241028f, -0.2217504233121872f, -0.08147184550762177f,
                              1.019484519958496f, -0.5315015316009521f, 0.11755672097206116f,
                              0.45920154452323914f, 0.3085343837738037f, -0.4644043445587158f,
                              0.28430482745170593f, 0.020477071404457092f, -0.09957485646009445f}),
                         2e-6, 1e-6))
      << "cs";
  EXPECT_THAT(
      (*out)[2],
      TensorNear(Literal<float>({3, 2, 2},
                                {0.32175150513648987f, 0.3847697377204895f, 0.531333327293396f,
                                 0.4924949109554291f, 0.4474277198314667f, 0.4543060064315796f,
                                 0.38431409001350403f, 0.5061683654785156f, 0.6265236139297485f,
                                 0.4410593807697296f, 0.40150484442710876f, 0.3816952407360077f}),
                 2e-6, 1e-6))
      << "f";
  EXPECT_THAT(
      (*out)[3],
      TensorNear(Literal<float>({3, 2, 2},
                                {0.8278615474700928f, 0.2816753685474396f, 0.20548631250858307f,
                                 0.5210943818092346f, 0.3882295489311218f, 0.24513326585292816f,
                                 0.706616997718811f, 0.47987422347068787f, 0.2063436210155487f,
                                 0.5782044529914856f, 0.8110182881355286f, 0.3410852253437042f}),
                 2e-6, 1e-6))
      << "o";
  EXPECT_THAT(
      (*out)[4],
      TensorNear(Literal<float>({3, 2, 2},
                                {0.17543044686317444f, -0.3575330972671509f, 0.30450212955474854f,
                                 0.4451383352279663f, -0.6946393251419067f, 0.3747897446155548f,
                                 0.6653667092323303f, -0.41855132579803467f, -0.3791889250278473f,
                                 0.4535115659236908f, -0.27681875228881836f, -0.4378827214241028f}),
                 2e-6, 1e-6))
      << "ci";
  EXPECT_THAT((*out)[5],
              TensorNear(Literal<float>(
                             {3, 2, 2},
                             {-0.19863183796405792f, -0.21818578243255615f, -0.081292062997818f,
                              0.7696564793586731f, -0.4865280091762543f, 0.11701817065477371f,
                              0.42943325638771057f, 0.29910317063331604f, -0.4336670935153961f,
                              0.27688461542129517f, 0.020474210381507874f, -0.09924706071615219f}),
                         2e-6, 1e-6))
      << "co";
  EXPECT_THAT((*out)[6],
              TensorNear(Literal<float>(
                             {3, 2, 2},
                             {-0.16443966329097748f, -0.061457559466362f, -0.016704406589269638f,
                              0.4010636806488037f, -0.18888455629348755f, 0.02868504635989666f,
                              0.30344483256340027f, 0.1435319036245346f, -0.08948443830013275f,
                              0.1600959151983261f, 0.016604959964752197f, -0.033851705491542816f}),
                         2e-6, 1e-6))
      << "h";
  // TF's kernel CHECK-fails past the sequence.
  EXPECT_THAT(r.Run({Scalar<int64_t>(5), in.xs, in.cs, in.h, in.w, in.wci, in.wcf, in.wco, in.b}),
              StatusIs(absl::StatusCode::kInvalidArgument, "seq_len_max 5 must be in [0, 3]"));
}

struct GruWeights {
  Tensor w_ru =
      Literal<float>({5, 4}, {0.6727302074432373f,  0.3011114299297333f,     0.3014255464076996f,
                              0.4551525115966797f,  0.13969063758850098f,    -0.25569865107536316f,
                              -0.320096492767334f,  -0.3200799822807312f,    0.5480289459228516f,
                              -0.5841524600982666f, -0.23854780197143555f,   -0.12849757075309753f,
                              0.0898476094007492f,  0.23013976216316223f,    -0.49963879585266113f,
                              -0.6920053958892822f, -0.0017656930722296238f, 0.48542553186416626f,
                              0.3028232157230377f,  0.08626031130552292f});
  Tensor w_c =
      Literal<float>({5, 2}, {-0.12686225771903992f, 0.11729347705841064f, -0.09733403474092484f,
                              0.32688263058662415f, -0.31777894496917725f, 0.053695980459451675f,
                              -0.04431205615401268f, 0.2173437625169754f, 0.08985541015863419f,
                              1.0200138092041016f});
  Tensor b_ru = Literal<float>({4}, {0.14986547827720642f, 0.1496737152338028f,
                                     -0.20395039021968842f, -0.034031663089990616f});
  Tensor b_c = Literal<float>({2}, {-0.06086106225848198f, 0.05327216163277626f});
};

// dL/dcs and dL/dh for the gradient ops: one step, and three.
struct Incoming {
  Tensor cs_grad = Literal<float>({2, 2}, {0.0006150766857899725f, 0.14937277138233185f,
                                           -0.13706892728805542f, -0.44529592990875244f});
  Tensor h_grad = Literal<float>({2, 2}, {-0.2273353934288025f, -0.4958232641220093f,
                                          0.0300718005746603f, 0.6701076030731201f});
  Tensor cs_grads = Literal<float>(
      {3, 2, 2},
      {-0.24610325694084167f, -0.31023743748664856f, 0.2449210286140442f, 0.17844350636005402f,
       0.05270712450146675f, -0.46523401141166687f, -0.014625911600887775f, 0.3476516008377075f,
       -0.6721072793006897f, -0.22880788147449493f, -0.9506113529205322f, -0.6447688937187195f});
  Tensor h_grads = Literal<float>(
      {3, 2, 2},
      {-0.9208675026893616f, -0.11754556745290756f, -0.633723258972168f, 0.13563217222690582f,
       0.07837554067373276f, -0.09346546977758408f, -1.2583798170089722f, -0.2693464457988739f,
       -0.024250471964478493f, 0.056654494255781174f, -0.7650678753852844f, -0.23887664079666138f});
};

TEST(RnnOpsTest, GruBlockCellMatchesTensorFlow) {
  const LstmInputs in;
  KernelRunner r("GRUBlockCell");
  const GruWeights g;
  auto out = r.Run({in.x, in.h, g.w_ru, g.w_c, g.b_ru, g.b_c});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0],
              TensorNear(Literal<float>({2, 2}, {0.7606802582740784f, 0.7128158807754517f,
                                                 0.4224184453487396f, 0.5029349327087402f}),
                         2e-6, 1e-6))
      << "r";
  EXPECT_THAT((*out)[1],
              TensorNear(Literal<float>({2, 2}, {0.6798445582389832f, 0.7733306884765625f,
                                                 0.4465341567993164f, 0.49145445227622986f}),
                         2e-6, 1e-6))
      << "u";
  EXPECT_THAT((*out)[2],
              TensorNear(Literal<float>({2, 2}, {-0.18811258673667908f, -0.4739183187484741f,
                                                 0.0742189958691597f, -0.30216720700263977f}),
                         2e-6, 1e-6))
      << "c";
  EXPECT_THAT((*out)[3],
              TensorNear(Literal<float>({2, 2}, {0.01652464270591736f, -0.24377284944057465f,
                                                 -0.021724537014961243f, -0.31782296299934387f}),
                         2e-6, 1e-6))
      << "H";
}

TEST(RnnOpsTest, LstmBlockCellGradMatchesTensorFlow) {
  const LstmInputs in;
  const Incoming d;
  for (const bool peephole : {false, true}) {
    KernelRunner fwd("LSTMBlockCell");
    fwd.Attr("forget_bias", peephole ? 0.5f : 1.0f).Attr("cell_clip", 3.0f);
    fwd.Attr("use_peephole", peephole);
    auto out = fwd.Run({in.x, in.cs, in.h, in.w, in.wci, in.wcf, in.wco, in.b});
    ASSERT_TRUE(out.ok()) << out.status();
    KernelRunner r("LSTMBlockCellGrad");
    r.Attr("use_peephole", peephole);
    auto grad = r.Run({in.x, in.cs, in.h, in.w, in.wci, in.wcf, in.wco, in.b, (*out)[0], (*out)[1],
                       (*out)[2], (*out)[3], (*out)[4], (*out)[5], d.cs_grad, d.h_grad});
    ASSERT_TRUE(grad.ok()) << grad.status();
    if (!peephole) {
      EXPECT_THAT((*grad)[0],
                  TensorNear(Literal<float>({2, 2}, {-0.04086281731724739f, -0.07066117972135544f,
                                                     -0.08170773088932037f, -0.2734842300415039f}),
                             2e-6, 1e-6))
          << "cs_prev_grad";
      EXPECT_THAT((*grad)[1],
                  TensorNear(Literal<float>({2, 8}, {-0.0065410868264734745f, 0.015282931737601757f,
                                                     -0.010662024840712547f, -0.023798994719982147f,
                                                     0.01941297948360443f, 0.0018312743632122874f,
                                                     0.022257644683122635f, 0.047355279326438904f,
                                                     0.004323214758187532f, 0.041313536465168f,
                                                     -0.06130899488925934f, -0.14184565842151642f,
                                                     0.012037277221679688f, -0.10021179914474487f,
                                                     -0.002566760638728738f, 0.12103131413459778f}),
                             2e-6, 1e-6))
          << "dicfo";
      EXPECT_THAT((*grad)[2], TensorNear(Literal<float>({2}, {0.0f, 0.0f}), 2e-6, 1e-6))
          << "wci_grad";
      EXPECT_THAT((*grad)[3], TensorNear(Literal<float>({2}, {0.0f, 0.0f}), 2e-6, 1e-6))
          << "wcf_grad";
      EXPECT_THAT((*grad)[4], TensorNear(Literal<float>({2}, {0.0f, 0.0f}), 2e-6, 1e-6))
          << "wco_grad";
    } else {
      EXPECT_THAT((*grad)[0],
                  TensorNear(Literal<float>({2, 2}, {-0.025100743398070335f, -0.04972883686423302f,
                                                     -0.057906374335289f, -0.213954359292984f}),
                             2e-6, 1e-6))
          << "cs_prev_grad";
      EXPECT_THAT(
          (*grad)[1],
          TensorNear(
              Literal<float>({2, 8},
                             {-0.007245661225169897f, 0.011785546317696571f, -0.0115891732275486f,
                              -0.0185586828738451f, 0.020492350682616234f, 0.0017781269270926714f,
                              0.013108431361615658f, 0.04712744057178497f, 0.0042818146757781506f,
                              0.03354765847325325f, -0.059424493461847305f, -0.09824841469526291f,
                              0.01326949056237936f, -0.1009061187505722f, -0.0021110055968165398f,
                              0.12114884704351425f}),
              2e-6, 1e-6))
          << "dicfo";
      EXPECT_THAT((*grad)[2],
                  TensorNear(Literal<float>({2}, {0.005465726833790541f, 0.05437270179390907f}),
                             2e-6, 1e-6))
          << "wci_grad";
      EXPECT_THAT((*grad)[3],
                  TensorNear(Literal<float>({2}, {-0.02643759921193123f, -0.1678616851568222f}),
                             2e-6, 1e-6))
          << "wcf_grad";
      EXPECT_THAT((*grad)[4],
                  TensorNear(Literal<float>({2}, {-0.00255796336568892f, 0.09678911417722702f}),
                             2e-6, 1e-6))
          << "wco_grad";
    }
  }
  KernelRunner r("LSTMBlockCellGrad");
  r.Attr("use_peephole", false);
  EXPECT_THAT(r.Run({in.x, in.cs, in.h, in.w, in.wci, in.wcf, in.wco, in.b, in.cs, in.cs, in.cs,
                     in.cs, in.cs, in.cs, in.cs, in.x}),
              StatusIs(absl::StatusCode::kInvalidArgument, "h_grad.dims(1) != cell_size: 3 vs. 2"));
}

// BlockLSTM's steps 0 and 1 of 3, and BlockLSTMV2's three, with peepholes.
TEST(RnnOpsTest, BlockLstmGradMatchesTensorFlow) {
  const LstmInputs in;
  const Incoming d;
  for (const bool v2 : {false, true}) {
    const int64_t steps = v2 ? 3 : 2;
    KernelRunner fwd(v2 ? "BlockLSTMV2" : "BlockLSTM");
    fwd.Attr("use_peephole", true);
    auto out =
        fwd.Run({Scalar<int64_t>(steps), in.xs, in.cs, in.h, in.w, in.wci, in.wcf, in.wco, in.b});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<Tensor> inputs = {
        Scalar<int64_t>(steps), in.xs, in.cs, in.h, in.w, in.wci, in.wcf, in.wco, in.b};
    inputs.insert(inputs.end(), out->begin(), out->end());
    inputs.push_back(d.cs_grads);
    inputs.push_back(d.h_grads);
    KernelRunner r(v2 ? "BlockLSTMGradV2" : "BlockLSTMGrad");
    r.Attr("use_peephole", true);
    auto grad = r.Run(inputs);
    ASSERT_TRUE(grad.ok()) << grad.status();
    if (!v2) {
      EXPECT_THAT(
          (*grad)[0],
          TensorNear(
              Literal<float>({3, 2, 3},
                             {-0.0051261186599731445f, 0.024657130241394043f, -0.28867053985595703f,
                              -0.021320229396224022f, 0.07648471742868423f, -0.03782002627849579f,
                              0.027580611407756805f, -0.08869703859090805f, -0.03334415331482887f,
                              -0.1461692601442337f, 0.04807895049452782f, -0.2863217294216156f,
                              0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}),
              2e-6, 1e-6))
          << "x_grad";
      EXPECT_THAT((*grad)[1],
                  TensorNear(Literal<float>({2, 2}, {-0.32982876896858215f, -0.5183802247047424f,
                                                     -0.3692033588886261f, 0.32390886545181274f}),
                             2e-6, 1e-6))
          << "cs_prev_grad";
      EXPECT_THAT(
          (*grad)[2],
          TensorNear(Literal<float>({2, 2}, {-0.22302229702472687f, -0.0789535790681839f,
                                             -0.024644097313284874f, 0.014890232123434544f}),
                     2e-6, 1e-6))
          << "h_prev_grad";
      EXPECT_THAT(
          (*grad)[3],
          TensorNear(
              Literal<float>(
                  {5, 8}, {-0.06495366245508194f,  -0.12464148551225662f,  0.46977323293685913f,
                           0.5817117691040039f,    -0.08847039192914963f,  -0.15716055035591125f,
                           -0.1457916796207428f,   -0.02592448517680168f,  0.11113830655813217f,
                           0.041941531002521515f,  -0.8345462083816528f,   0.15655618906021118f,
                           0.12894970178604126f,   0.1620563566684723f,    0.24629093706607819f,
                           -0.03518206626176834f,  -0.18811850249767303f,  -0.13553039729595184f,
                           0.5620332360267639f,    0.45410823822021484f,   -0.17304004728794098f,
                           -0.021979697048664093f, -0.2656702995300293f,   0.05929919332265854f,
                           0.010066460818052292f,  -0.014127111062407494f, 0.0014355964958667755f,
                           0.13988296687602997f,   0.020381011068820953f,  -0.02890995517373085f,
                           0.008550073951482773f,  -0.005814134143292904f, 0.023941434919834137f,
                           -0.014165699481964111f, -0.11900265514850616f,  0.0917346328496933f,
                           -0.017257776111364365f, 0.008144699037075043f,  0.038142018020153046f,
                           -0.0406147837638855f}),
              2e-6, 1e-6))
          << "w_grad";
      EXPECT_THAT((*grad)[4],
                  TensorNear(Literal<float>({2}, {-0.07664398849010468f, -0.018074285238981247f}),
                             2e-6, 1e-6))
          << "wci_grad";
      EXPECT_THAT((*grad)[5],
                  TensorNear(Literal<float>({2}, {-0.11019334197044373f, 0.25727301836013794f}),
                             2e-6, 1e-6))
          << "wcf_grad";
      EXPECT_THAT((*grad)[6],
                  TensorNear(Literal<float>({2}, {-0.19122591614723206f, -0.0014508292078971863f}),
                             2e-6, 1e-6))
          << "wco_grad";
      EXPECT_THAT((*grad)[7],
                  TensorNear(Literal<float>({8}, {0.11053859442472458f, 0.12074874341487885f,
                                                  -0.8375637531280518f, -0.34358376264572144f,
                                                  0.15230391919612885f, 0.21467377245426178f,
                                                  0.2512394189834595f, 0.008965998888015747f}),
                             2e-6, 1e-6))
          << "b_grad";
    } else {
      EXPECT_THAT(
          (*grad)[0],
          TensorNear(Literal<float>(
                         {3, 2, 3},
                         {-0.1858816146850586f, -0.5052834749221802f, -0.027240248396992683f,
                          -0.052122220396995544f, -0.12374532222747803f, 0.05142710730433464f,
                          -0.022741040214896202f, -0.009393692947924137f, -0.059821754693984985f,
                          -0.14269402623176575f, -0.4649823307991028f, 0.1665390282869339f,
                          -0.07006436586380005f, -0.130547896027565f, -0.01858106255531311f,
                          -0.39688143134117126f, -0.6404049396514893f, -0.22401197254657745f}),
                     2e-6, 1e-6))
          << "x_grad";
      EXPECT_THAT((*grad)[1],
                  TensorNear(Literal<float>({2, 2}, {-0.2002551257610321f, -0.21868810057640076f,
                                                     -0.1787678748369217f, 0.10738296806812286f}),
                             2e-6, 1e-6))
          << "cs_prev_grad";
      EXPECT_THAT((*grad)[2],
                  TensorNear(Literal<float>({2, 2}, {0.22495929896831512f, 0.16022519767284393f,
                                                     0.027291996404528618f, 0.02638605609536171f}),
                             2e-6, 1e-6))
          << "h_prev_grad";
      EXPECT_THAT(
          (*grad)[3],
          TensorNear(
              Literal<float>(
                  {5, 8}, {0.07258422672748566f,    0.022447481751441956f,   -0.1767800897359848f,
                           -0.1314506232738495f,    1.0004565715789795f,     0.6044905781745911f,
                           0.06325200945138931f,    -0.004194891080260277f,  -0.35421469807624817f,
                           0.05255002900958061f,    0.14749349653720856f,    0.07572100311517715f,
                           -0.741033673286438f,     0.16407182812690735f,    -0.11156345903873444f,
                           -0.0034918510355055332f, 0.1304813027381897f,     -0.20470945537090302f,
                           0.04885140061378479f,    0.13246683776378632f,    2.403778314590454f,
                           0.6599349975585938f,     0.08089818805456161f,    0.013537431135773659f,
                           0.017848221585154533f,   0.03642580285668373f,    -0.05516384541988373f,
                           -0.030788814648985863f,  -0.25964468717575073f,   -0.0721125677227974f,
                           0.002870553871616721f,   -0.0009462613961659372f, -0.045155156403779984f,
                           -0.0016000373288989067f, -0.06479786336421967f,   -0.04046627879142761f,
                           -0.22864480316638947f,   -0.006149386987090111f,  -0.050020694732666016f,
                           -0.004692224785685539f}),
              2e-6, 1e-6))
          << "w_grad";
      EXPECT_THAT(
          (*grad)[4],
          TensorNear(Literal<float>({2}, {0.0755181610584259f, 0.06332527846097946f}), 2e-6, 1e-6))
          << "wci_grad";
      EXPECT_THAT((*grad)[5],
                  TensorNear(Literal<float>({2}, {-0.33633509278297424f, 0.12160627543926239f}),
                             2e-6, 1e-6))
          << "wcf_grad";
      EXPECT_THAT((*grad)[6],
                  TensorNear(Literal<float>({2}, {-0.04256695136427879f, 0.010896824300289154f}),
                             2e-6, 1e-6))
          << "wco_grad";
      EXPECT_THAT((*grad)[7],
                  TensorNear(Literal<float>({8}, {-0.03297039121389389f, 0.07805053889751434f,
                                                  0.16508004069328308f, 0.07509466260671616f,
                                                  -2.5300662517547607f, -0.8094118237495422f,
                                                  -0.1005728468298912f, 0.014242880046367645f}),
                             2e-6, 1e-6))
          << "b_grad";
    }
    // TF's kernel CHECK-fails past the sequence.
    inputs[0] = Scalar<int64_t>(4);
    EXPECT_THAT(r.Run(inputs),
                StatusIs(absl::StatusCode::kInvalidArgument, "seq_len_max 4 must be in [0, 3]"));
    inputs[0] = Scalar<int64_t>(steps);
    inputs[9] = in.cs;
    EXPECT_THAT(r.Run(inputs),
                StatusIs(absl::StatusCode::kInvalidArgument, "i must be rank 3, got [2,2]"));
    inputs[9] = Literal<float>({3, 1, 2}, std::vector<float>(6, 0));
    EXPECT_THAT(r.Run(inputs),
                StatusIs(absl::StatusCode::kInvalidArgument, "i.dims(1) != batch_size: 1 vs. 2"));
  }
}

TEST(RnnOpsTest, GruBlockCellGradMatchesTensorFlow) {
  const LstmInputs in;
  const GruWeights g;
  const Incoming d;
  auto out = KernelRunner("GRUBlockCell").Run({in.x, in.h, g.w_ru, g.w_c, g.b_ru, g.b_c});
  ASSERT_TRUE(out.ok()) << out.status();
  KernelRunner r("GRUBlockCellGrad");
  auto grad =
      r.Run({in.x, in.h, g.w_ru, g.w_c, g.b_ru, g.b_c, (*out)[0], (*out)[1], (*out)[2], d.h_grad});
  ASSERT_TRUE(grad.ok()) << grad.status();
  EXPECT_THAT((*grad)[0],
              TensorNear(Literal<float>({2, 3}, {-0.01676144078373909f, -0.009530339390039444f,
                                                 0.02232212759554386f, 0.021796155720949173f,
                                                 0.10828879475593567f, 0.026662347838282585f}),
                         2e-6, 1e-6))
      << "d_x";
  EXPECT_THAT((*grad)[1],
              TensorNear(Literal<float>({2, 2}, {-0.14049166440963745f, -0.456367164850235f,
                                                 0.03973458707332611f, 0.47513049840927124f}),
                         2e-6, 1e-6))
      << "d_h_prev";
  EXPECT_THAT((*grad)[2],
              TensorNear(Literal<float>({2, 2}, {-0.0702071562409401f, -0.08714575320482254f,
                                                 0.0165520329028368f, 0.3096652925014496f}),
                         2e-6, 1e-6))
      << "d_c_bar";
  EXPECT_THAT((*grad)[3],
              TensorNear(Literal<float>({2, 4}, {-0.0003253252652939409f, 0.0034360347781330347f,
                                                 -0.014894041232764721f, -0.025865569710731506f,
                                                 -0.0022843226324766874f, -0.026499666273593903f,
                                                 -0.0015968568623065948f, -0.005335173103958368f}),
                         2e-6, 1e-6))
      << "d_r_bar_u_bar";
  EXPECT_THAT(r.Run({in.x, in.h, g.w_ru, g.w_c, g.b_ru, g.b_c, (*out)[0], (*out)[1], (*out)[2],
                     Literal<float>({1, 2}, {0, 0})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "d_h.dims(0) != batch_size: 1 vs. 2"));
}

}  // namespace
}  // namespace towerflow
