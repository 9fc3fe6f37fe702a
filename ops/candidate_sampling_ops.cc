// The candidate samplers of sampled softmax and NCE (tf.nn.sampled_softmax_loss,
// tf.nn.nce_loss, tf.random.*_candidate_sampler) and ComputeAccidentalHits
// (kernels/cpu/candidate_sampler_ops.cc).
#include <cstdint>
#include <limits>

#include "core/status_macros.h"
#include "graph/op_registry.h"

namespace towerflow {
namespace {

// [num_sampled], [batch, num_true], [num_sampled] from true_classes' rows.
absl::Status CandidateSamplerShape(InferenceContext* c) {
  int64_t num_sampled = 0, num_true = 0;
  TW_RETURN_IF_ERROR(c->GetAttr("num_sampled", &num_sampled));
  TW_RETURN_IF_ERROR(c->GetAttr("num_true", &num_true));
  PartialTensorShape true_classes;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &true_classes));
  c->set_output(0, PartialTensorShape({num_sampled}));
  c->set_output(1, PartialTensorShape({true_classes.dim_size(0), num_true}));
  c->set_output(2, PartialTensorShape({num_sampled}));
  return absl::OkStatus();
}

// The learned unigram samplers count in int32.
absl::Status UnigramCandidateSamplerShape(InferenceContext* c) {
  int64_t range_max = 0;
  TW_RETURN_IF_ERROR(c->GetAttr("range_max", &range_max));
  if (range_max >= std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        "range_max must be less than 2147483647 for unigram samplers");
  }
  return CandidateSamplerShape(c);
}

// A sampler's signature: true_classes in, the sampled candidates and the
// expected counts of the true and the sampled ones out; its own attrs
// (range_max and the rest) between unique and the seeds, as TF's.
OpDefBuilder Sampler(const char* name) {
  OpDefBuilder b(name, __FILE__);
  b.Input("true_classes: int64")
      .Output("sampled_candidates: int64")
      .Output("true_expected_count: float")
      .Output("sampled_expected_count: float")
      .Attr("num_true: int >= 1")
      .Attr("num_sampled: int >= 1")
      .Attr("unique: bool");
  return b;
}
OpDefBuilder Seeded(OpDefBuilder b) {
  b.Attr("seed: int = 0").Attr("seed2: int = 0").SetIsStateful();
  return b;
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOp(Seeded(Sampler("UniformCandidateSampler").Attr("range_max: int >= 1"))
                 .Doc("num_sampled candidates drawn uniformly from [0, range_max), TF's for the "
                      "same seeds.")
                 .SetShapeFn(CandidateSamplerShape));
  RegisterOp(Seeded(Sampler("LogUniformCandidateSampler").Attr("range_max: int >= 1"))
                 .Doc("Candidates from Zipf's log-uniform distribution over [0, range_max).")
                 .SetShapeFn(CandidateSamplerShape));
  RegisterOp(Seeded(Sampler("LearnedUnigramCandidateSampler").Attr("range_max: int >= 1"))
                 .Doc("Candidates from the counts of the true classes seen so far (each starts "
                      "at 1).")
                 .SetShapeFn(UnigramCandidateSamplerShape));
  RegisterOp(Seeded(Sampler("ThreadUnsafeUnigramCandidateSampler").Attr("range_max: int >= 1"))
                 .Doc("LearnedUnigramCandidateSampler's draws (TF's unlocked form).")
                 .SetShapeFn(UnigramCandidateSamplerShape));
  RegisterOp(Seeded(Sampler("FixedUnigramCandidateSampler")
                        .Attr("range_max: int >= 1")
                        .Attr("vocab_file: string = ''")
                        .Attr("distortion: float = 1.0")
                        .Attr("num_reserved_ids: int = 0")
                        .Attr("num_shards: int >= 1 = 1")
                        .Attr("shard: int >= 0 = 0")
                        .Attr("unigrams: list(float) = []"))
                 .Doc("Candidates from fixed unigram weights (a vocabulary CSV's last column, or "
                      "unigrams) raised to distortion, this shard's ids only.")
                 .SetShapeFn(CandidateSamplerShape));
  RegisterOp(Seeded(Sampler("AllCandidateSampler"))
                 .Doc("Every candidate of [0, num_sampled), each expected once.")
                 .SetShapeFn(CandidateSamplerShape));
  return true;
}();

TW_REGISTER_OP("ComputeAccidentalHits")
    .Input("true_classes: int64")
    .Input("sampled_candidates: int64")
    .Output("indices: int32")
    .Output("ids: int64")
    .Output("weights: float")
    .Attr("num_true: int")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Doc(
        "The (row, sampled position) pairs where a sampled candidate is one of the row's true "
        "classes, each weighted -FLT_MAX.")
    .SetShapeFn([](InferenceContext* c) {
      int64_t num_true = 0;
      TW_RETURN_IF_ERROR(c->GetAttr("num_true", &num_true));
      PartialTensorShape true_classes, sampled;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &true_classes));
      int64_t columns = 0;
      TW_RETURN_IF_ERROR(c->MergeDim(true_classes.dim_size(1), num_true, &columns));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &sampled));
      for (int i = 0; i < 3; ++i) c->set_output(i, PartialTensorShape({-1}));
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
