// The candidate samplers and ComputeAccidentalHits against TensorFlow 2.21's
// outputs for the same seeds and inputs (tf.compat.v1 graphs run twice or
// three times: each call continues the node's stream, and the learned
// unigram samplers count the true classes between calls).
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;

// A sampler node with TF's attrs of these cases (seed 7, seed2 3).
void Sampler(KernelRunner& r, int64_t num_true, int64_t num_sampled, bool unique) {
  r.Attr("num_true", num_true)
      .Attr("num_sampled", num_sampled)
      .Attr("unique", unique)
      .Attr("seed", int64_t{7})
      .Attr("seed2", int64_t{3});
}

// One call: the sampled ids and both expected counts.
void ExpectDraw(KernelRunner& r, const Tensor& true_classes, const std::vector<int64_t>& ids,
                const std::vector<float>& true_counts, const std::vector<float>& counts) {
  absl::StatusOr<std::vector<Tensor>> out = r.Run({true_classes});
  ASSERT_TRUE(out.ok()) << out.status();
  const int64_t n = static_cast<int64_t>(ids.size());
  EXPECT_THAT((*out)[0], TensorIs<int64_t>({n}, ids));
  EXPECT_THAT((*out)[1], TensorNear<float>(true_classes.shape(), true_counts, 1e-6));
  EXPECT_THAT((*out)[2], TensorNear<float>({n}, counts, 1e-6));
}

const Tensor kTrue = Literal<int64_t>({2, 2}, {1, 2, 3, 4});

TEST(CandidateSamplerTest, LogUniformIsTensorFlowsRunAfterRun) {
  KernelRunner u("LogUniformCandidateSampler");
  Sampler(u, 2, 5, true);
  u.Attr("range_max", int64_t{10});
  // Unique: expected counts 1 - (1 - p)^tries.
  ExpectDraw(u, kTrue, {0, 2, 9, 1, 5},
             {0.6709079742431641f, 0.5355095863342285f, 0.4434850513935089f, 0.37779146432876587f},
             {0.8708840608596802f, 0.5355095863342285f, 0.21600578725337982f, 0.6709079742431641f,
              0.32878872752189636f});
  ExpectDraw(u, kTrue, {7, 2, 0, 3, 5},
             {0.8112112879753113f, 0.6834334135055542f, 0.5848402380943298f, 0.5092006921768188f},
             {0.36447280645370483f, 0.6834334135055542f, 0.9536051154136658f, 0.5848402380943298f,
              0.45009350776672363f});
  KernelRunner n("LogUniformCandidateSampler");
  Sampler(n, 2, 6, false);
  n.Attr("range_max", int64_t{1000000});
  const std::vector<float> truth = {0.1760912537574768f, 0.1249387264251709f, 0.0969100147485733f,
                                    0.0791812390089035f};
  ExpectDraw(n, kTrue, {16, 700, 646772, 0, 181, 33824}, truth,
             {0.02482358179986477f, 0.0006190941203385592f, 6.714784035466437e-07f,
              0.3010299801826477f, 0.0023797014728188515f, 1.283926121686818e-05f});
  ExpectDraw(n, kTrue, {333429, 631, 0, 217, 571773, 69711}, truth,
             {1.3025037333136424e-06f, 0.0006866316543892026f, 0.3010299801826477f,
              0.0019876211881637573f, 7.59555518925481e-07f, 6.22979314357508e-06f});
}

TEST(CandidateSamplerTest, LogUniformStaysInAnyRange) {
  // exp(u * log(2^63)) reaches 2^63, past int64: the draws stay in range.
  KernelRunner r("LogUniformCandidateSampler");
  Sampler(r, 2, 64, false);
  r.Attr("range_max", std::numeric_limits<int64_t>::max());
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, r.Run({kTrue}));
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_GE(out[0].data<int64_t>()[i], 0);
    EXPECT_LT(out[0].data<int64_t>()[i], std::numeric_limits<int64_t>::max());
  }
}

TEST(CandidateSamplerTest, UniformIsTensorFlows) {
  KernelRunner u("UniformCandidateSampler");
  Sampler(u, 2, 5, true);
  u.Attr("range_max", int64_t{10});
  const std::vector<float> a(5, 0.5217031240463257f), b(5, 0.5f);
  ExpectDraw(u, kTrue, {1, 8, 2, 0, 6}, {a.begin(), a.begin() + 4}, a);
  // Five distinct ids in five tries: p * num_sampled.
  ExpectDraw(u, kTrue, {9, 7, 3, 2, 4}, {b.begin(), b.begin() + 4}, b);
  // Past 2^32: 64-bit words.
  KernelRunner big("UniformCandidateSampler");
  Sampler(big, 2, 4, false);
  big.Attr("range_max", (int64_t{1} << 40) + 3);
  const std::vector<float> p(4, 3.637978807091713e-12f);
  ExpectDraw(big, kTrue, {286006724133, 69388137750, 930212630581, 979532459505}, p, p);
  ExpectDraw(big, kTrue, {522619101329, 575035193862, 204046535044, 199727463319}, p, p);
}

TEST(CandidateSamplerTest, LearnedUnigramCountsTheTrueClasses) {
  for (const char* op : {"LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler"}) {
    SCOPED_TRACE(op);
    KernelRunner u(op);
    Sampler(u, 2, 3, true);
    u.Attr("range_max", int64_t{6});
    const std::vector<float> a(4, 0.5f), b(4, 0.5904000401496887f), c(4, 0.6428571343421936f);
    ExpectDraw(u, kTrue, {3, 0, 2}, a, {a.begin(), a.begin() + 3});
    ExpectDraw(u, kTrue, {2, 4, 3}, b, {b.begin(), b.begin() + 3});
    ExpectDraw(u, kTrue, {1, 3, 4}, c, {c.begin(), c.begin() + 3});
    KernelRunner n(op);
    Sampler(n, 2, 4, false);
    n.Attr("range_max", int64_t{5});
    const std::vector<float> d(4, 0.800000011920929f), e(4, 0.8888888955116272f),
        f(4, 0.9230769276618958f);
    ExpectDraw(n, kTrue, {3, 3, 0, 3}, d, d);
    ExpectDraw(n, kTrue, {4, 4, 1, 1}, e, e);
    ExpectDraw(
        n, kTrue, {2, 3, 0, 2}, f,
        {0.9230769276618958f, 0.9230769276618958f, 0.3076923191547394f, 0.9230769276618958f});
  }
}

TEST(CandidateSamplerTest, FixedUnigramIsTensorFlows) {
  KernelRunner u("FixedUnigramCandidateSampler");
  Sampler(u, 2, 4, true);
  u.Attr("range_max", int64_t{7})
      .Attr("unigrams", std::vector<float>{1, 2, 3, 4, 5, 0.5f, 8})
      .Attr("distortion", 0.75f);
  ExpectDraw(u, kTrue, {3, 6, 4, 1},
             {0.4756773114204407f, 0.5905503034591675f, 0.6767697334289551f, 0.7433801293373108f},
             {0.6767697334289551f, 0.8703300952911377f, 0.7433801293373108f, 0.4756773114204407f});
  ExpectDraw(u, kTrue, {6, 3, 4, 2},
             {0.529168963432312f, 0.6471685767173767f, 0.7322286367416382f, 0.7954314947128296f},
             {0.9077473282814026f, 0.7322286367416382f, 0.7954314947128296f, 0.6471685767173767f});
  // Shard 1 of 2: reserved id 1 (weight 0), then unigrams 0, 2 and 4 (TF
  // numbers them on from the shard's one reserved id).
  KernelRunner s("FixedUnigramCandidateSampler");
  Sampler(s, 1, 3, false);
  s.Attr("range_max", int64_t{4})
      .Attr("unigrams", std::vector<float>{1, 2, 3, 4, 5, 6})
      .Attr("num_reserved_ids", int64_t{3})
      .Attr("num_shards", int64_t{2})
      .Attr("shard", int64_t{1});
  const Tensor rows = Literal<int64_t>({2, 1}, {1, 3});
  ExpectDraw(s, rows, {2, 3, 3}, {0.3333333432674408f, 1.6666667461395264f},
             {1, 1.6666667461395264f, 1.6666667461395264f});
  ExpectDraw(s, rows, {3, 2, 3}, {0.3333333432674408f, 1.6666667461395264f},
             {1.6666667461395264f, 1, 1.6666667461395264f});
}

TEST(CandidateSamplerTest, FixedUnigramReadsAVocabularyFile) {
  // The last column of each row; a \r before a newline is dropped.
  const std::string path = testing::MakeTempDir("vocab") + "/vocab.csv";
  std::ofstream(path) << "the,5\nof,3\r\nand,1\nto,0.5\nzz,2";
  KernelRunner u("FixedUnigramCandidateSampler");
  Sampler(u, 1, 3, true);
  u.Attr("range_max", int64_t{5}).Attr("vocab_file", path).Attr("distortion", 0.5f);
  const Tensor rows = Literal<int64_t>({2, 1}, {0, 4});
  ExpectDraw(u, rows, {3, 0, 1}, {0.7803524136543274f, 0.5893375277519226f},
             {0.343144029378891f, 0.7803524136543274f, 0.6738893389701843f});
  ExpectDraw(u, rows, {1, 0, 4}, {0.9462249279022217f, 0.5984451770782471f},
             {0.7329427003860474f, 0.9462249279022217f, 0.5984451770782471f});

  const std::string bad = testing::MakeTempDir("vocab_bad") + "/vocab.csv";
  std::ofstream(bad) << "a,1\nb,x\n";
  KernelRunner b("FixedUnigramCandidateSampler");
  Sampler(b, 2, 1, true);
  b.Attr("range_max", int64_t{2}).Attr("vocab_file", bad);
  EXPECT_THAT(b.Run({kTrue}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Wrong vocabulary format at line: b,x"));
  KernelRunner missing("FixedUnigramCandidateSampler");
  Sampler(missing, 2, 1, true);
  missing.Attr("range_max", int64_t{2}).Attr("vocab_file", bad + ".none");
  EXPECT_THAT(missing.Run({kTrue}), StatusIs(absl::StatusCode::kNotFound, "vocab.csv.none"));
}

TEST(CandidateSamplerTest, AllAndAccidentalHits) {
  KernelRunner all("AllCandidateSampler");
  Sampler(all, 1, 4, true);
  ExpectDraw(all, Literal<int64_t>({2, 1}, {0, 2}), {0, 1, 2, 3}, {1, 1}, {1, 1, 1, 1});

  // Row and sampled position of every true class that was sampled (the
  // last position of a repeated candidate).
  KernelRunner hits("ComputeAccidentalHits");
  hits.Attr("num_true", int64_t{2});
  absl::StatusOr<std::vector<Tensor>> out = hits.Run(
      {Literal<int64_t>({3, 2}, {1, 7, 3, 1, 9, 9}), Literal<int64_t>({5}, {7, 1, 5, 9, 7})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int32_t>({5}, {0, 0, 1, 2, 2}));
  EXPECT_THAT((*out)[1], TensorIs<int64_t>({5}, {1, 4, 1, 3, 3}));
  EXPECT_THAT((*out)[2], TensorIs<float>({5}, std::vector<float>(5, -3.4028234663852886e+38f)));
  EXPECT_THAT(hits.Run({Literal<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}), Literal<int64_t>({1}, {1})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "true_candidates must be a batch_size * num_true matrix"));
  EXPECT_THAT(hits.Run({kTrue, Literal<int64_t>({1, 2}, {7, 1})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "sampled_candidates must be a vector, which is typically an output from "
                       "CandidateSampler"));
}

TEST(CandidateSamplerTest, RefusesWhatTensorFlowRefuses) {
  KernelRunner u("UniformCandidateSampler");
  Sampler(u, 2, 5, true);
  u.Attr("range_max", int64_t{10});
  EXPECT_THAT(u.Run({Literal<int64_t>({2}, {1, 2})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "true_classes must be a matrix"));
  EXPECT_THAT(u.Run({Literal<int64_t>({1, 3}, {1, 2, 3})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "true_classes must have num_true columns, expected: 3 was: 2"));
  EXPECT_THAT(u.Run({Literal<int64_t>({1, 2}, {1, 10})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "`true_candidate` out of range [0, 10), received 10"));
  EXPECT_THAT(u.Run({Literal<int64_t>({1, 2}, {-1, 1})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "`true_candidate` out of range [0, 10), received -1"));
  KernelRunner small("UniformCandidateSampler");
  Sampler(small, 2, 11, true);
  small.Attr("range_max", int64_t{10});
  EXPECT_THAT(small.Run({kTrue}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Sampler's range is too small."));

  KernelRunner f("FixedUnigramCandidateSampler");
  Sampler(f, 2, 4, true);
  f.Attr("range_max", int64_t{7});
  EXPECT_THAT(f.Run({kTrue}), StatusIs(absl::StatusCode::kInvalidArgument,
                                       "Must provide either vocab_file or unigrams."));
  f.Attr("unigrams", std::vector<float>(7, 1.0f)).Attr("vocab_file", std::string("v.csv"));
  EXPECT_THAT(f.Run({kTrue}), StatusIs(absl::StatusCode::kInvalidArgument,
                                       "Must only provide one of vocab_file and unigrams."));
  f.Attr("unigrams", std::vector<float>(6, 1.0f)).Attr("vocab_file", std::string());
  EXPECT_THAT(f.Run({kTrue}), StatusIs(absl::StatusCode::kInvalidArgument,
                                       "range is 7 must be equal to weights size  6"));
  // Beyond TF: unique draws from fewer ids of positive weight than
  // num_sampled never end in TF's kernel.
  KernelRunner zero("FixedUnigramCandidateSampler");
  Sampler(zero, 1, 3, true);
  zero.Attr("range_max", int64_t{5})
      .Attr("unigrams", std::vector<float>{1, 2})
      .Attr("num_reserved_ids", int64_t{3});
  EXPECT_THAT(
      zero.Run({Literal<int64_t>({1, 1}, {4})}),
      StatusIs(absl::StatusCode::kInvalidArgument, "only 2 of the 5 ids have a positive weight"));
  KernelRunner learned("LearnedUnigramCandidateSampler");
  Sampler(learned, 2, 3, true);
  learned.Attr("range_max", int64_t{2147483647});
  EXPECT_THAT(learned.Run({kTrue}),
              StatusIs(absl::StatusCode::kInvalidArgument, "range_max must be less than"));
}

}  // namespace
}  // namespace towerflow
