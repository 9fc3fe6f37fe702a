// Random ops. `seed` and `seed2` pick a reproducible stream; both 0 means a
// fresh random stream per kernel (graph/random_seed.h derives them from a
// graph-level seed, as tf.set_random_seed does).
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status RandomShape(InferenceContext* c) { return shape_fns::ShapeFromShapeTensorInput(c, 0); }

void RegisterRandom(const char* name, const char* doc) {
  RegisterOp(OpDefBuilder(name, __FILE__)
                 .Input("shape: T")
                 .Output("output: dtype")
                 .Attr("seed: int = 0")
                 .Attr("seed2: int = 0")
                 .Attr("dtype: {half, bfloat16, float, double}")
                 .Attr("T: {int32, int64}")
                 .SetIsStateful()
                 .Doc(doc)
                 .SetShapeFn(RandomShape));
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterRandom("RandomUniform", "Uniform values in [0, 1).");
  RegisterRandom("RandomStandardNormal", "Normal values, mean 0, standard deviation 1.");
  RegisterRandom("TruncatedNormal",
                 "Normal values (mean 0, stddev 1) redrawn when beyond 2 stddevs.");
  return true;
}();

TW_REGISTER_OP("RandomUniformInt")
    .Input("shape: T")
    .Input("minval: Tout")
    .Input("maxval: Tout")
    .Output("output: Tout")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("Tout: {int32, int64}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .Doc("Uniform integers in [minval, maxval).")
    .SetShapeFn([](InferenceContext* c) {
      for (int i = 1; i <= 2; ++i) {
        PartialTensorShape scalar;
        TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &scalar));
      }
      return RandomShape(c);
    });

// The stateless random ops (kernels/cpu/stateless_random_ops.cc): the same
// seed [2] gives the same numbers, TF's to the bit; the V2 forms take the
// Philox key [1] and counter [2] StatelessRandomGetKeyCounter derives.
[[maybe_unused]] const bool kStatelessRegistered = [] {
  const struct {
    const char* name;
    const char* doc;
  } floats[] = {{"Uniform", "Uniform values in [0, 1)"},
                {"Normal", "Normal values, mean 0, standard deviation 1"},
                {"TruncatedNormal", "Normal values redrawn when beyond 2 standard deviations"}};
  for (const auto& f : floats) {
    const std::string base = std::string(f.name) == "TruncatedNormal"
                                 ? "StatelessTruncatedNormal"
                                 : absl::StrCat("StatelessRandom", f.name);
    RegisterOp(OpDefBuilder(base, __FILE__)
                   .Input("shape: T")
                   .Input("seed: Tseed")
                   .Output("output: dtype")
                   .Attr("dtype: {half, bfloat16, float, double} = DT_FLOAT")
                   .Attr("T: {int32, int64} = DT_INT32")
                   .Attr("Tseed: {int32, int64} = DT_INT64")
                   .Doc(absl::StrCat(f.doc, ", from seed"))
                   .SetShapeFn(RandomShape));
    RegisterOp(OpDefBuilder(absl::StrCat(base, "V2"), __FILE__)
                   .Input("shape: Tshape")
                   .Input("key: uint64")
                   .Input("counter: uint64")
                   .Input("alg: int32")
                   .Output("output: dtype")
                   .Attr("dtype: {half, bfloat16, float, double} = DT_FLOAT")
                   .Attr("Tshape: {int32, int64} = DT_INT32")
                   .Doc(absl::StrCat(f.doc, ", from a Philox key and counter"))
                   .SetShapeFn(RandomShape));
  }
  return true;
}();

TW_REGISTER_OP("StatelessRandomUniformInt")
    .Input("shape: T")
    .Input("seed: Tseed")
    .Input("minval: dtype")
    .Input("maxval: dtype")
    .Output("output: dtype")
    .Attr("dtype: {int32, int64}")
    .Attr("T: {int32, int64}")
    .Attr("Tseed: {int32, int64} = DT_INT64")
    .Doc("Integers in [minval, maxval), from seed.")
    .SetShapeFn(RandomShape);

TW_REGISTER_OP("StatelessRandomUniformIntV2")
    .Input("shape: Tshape")
    .Input("key: uint64")
    .Input("counter: uint64")
    .Input("alg: int32")
    .Input("minval: dtype")
    .Input("maxval: dtype")
    .Output("output: dtype")
    .Attr("dtype: {int32, int64, uint32, uint64}")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .Doc("Integers in [minval, maxval), from a Philox key and counter.")
    .SetShapeFn(RandomShape);

TW_REGISTER_OP("StatelessRandomUniformFullInt")
    .Input("shape: T")
    .Input("seed: Tseed")
    .Output("output: dtype")
    .Attr("dtype: {int32, int64, uint32, uint64} = DT_UINT64")
    .Attr("T: {int32, int64} = DT_INT32")
    .Attr("Tseed: {int32, int64, uint32, uint64} = DT_INT64")
    .Doc("Integers over the whole range of dtype, from seed.")
    .SetShapeFn(RandomShape);

TW_REGISTER_OP("StatelessRandomUniformFullIntV2")
    .Input("shape: Tshape")
    .Input("key: uint64")
    .Input("counter: uint64")
    .Input("alg: int32")
    .Output("output: dtype")
    .Attr("dtype: {int32, int64, uint32, uint64} = DT_UINT64")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .Doc("Integers over the whole range of dtype, from a Philox key and counter.")
    .SetShapeFn(RandomShape);

TW_REGISTER_OP("StatelessRandomGetKeyCounter")
    .Input("seed: Tseed")
    .Output("key: uint64")
    .Output("counter: uint64")
    .Attr("Tseed: {int32, int64} = DT_INT64")
    .Doc("The Philox key [1] and counter [2] the stateless ops use for seed.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialTensorShape({1}));
      c->set_output(1, PartialTensorShape({2}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("StatelessRandomGetKeyCounterAlg")
    .Input("seed: Tseed")
    .Output("key: uint64")
    .Output("counter: uint64")
    .Output("alg: int32")
    .Attr("Tseed: {int32, int64} = DT_INT64")
    .Doc("StatelessRandomGetKeyCounter and the algorithm, 1 (Philox), in one op.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialTensorShape({1}));
      c->set_output(1, PartialTensorShape({2}));
      c->set_output(2, PartialTensorShape({}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("StatelessRandomGetAlg")
    .Output("alg: int32")
    .SetIsStateful()
    .Doc("The algorithm the V2 stateless ops use here: 1, Philox.")
    .SetShapeFn(shape_fns::ScalarShape);

// [batch, num_samples] from logits [batch, classes] and a scalar count.
absl::Status MultinomialShape(InferenceContext* c) {
  PartialTensorShape logits, count;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &logits));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &count));
  TW_ASSIGN_OR_RETURN(std::optional<int64_t> samples, c->ConstantScalarInput(1));
  if (samples.has_value() && *samples < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_samples should be non-negative, got ", *samples));
  }
  c->set_output(
      0, PartialTensorShape({logits.dims() == 2 ? logits.dim_size(0) : -1, samples.value_or(-1)}));
  return absl::OkStatus();
}

TW_REGISTER_OP("Multinomial")
    .Input("logits: T")
    .Input("num_samples: int32")
    .Output("output: output_dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("T: realnumbertype")
    .Attr("output_dtype: {int32, int64} = DT_INT64")
    .SetIsStateful()
    .Doc("num_samples class indices per row, drawn with the probabilities softmax(logits).")
    .SetShapeFn(MultinomialShape);

TW_REGISTER_OP("StatelessMultinomial")
    .Input("logits: T")
    .Input("num_samples: int32")
    .Input("seed: Tseed")
    .Output("output: output_dtype")
    .Attr("T: realnumbertype")
    .Attr("Tseed: {int32, int64} = DT_INT64")
    .Attr("output_dtype: {int32, int64} = DT_INT64")
    .Doc("Multinomial, drawn from the stream of the seed pair [2].")
    .SetShapeFn(MultinomialShape);

TW_REGISTER_OP("RngReadAndSkip")
    .Input("resource: resource")
    .Input("alg: int32")
    .Input("delta: uint64")
    .Output("value: int64")
    .SetIsStateful()
    .Doc(
        "tf.random.Generator's step: the state of the RNG in the int64 variable (Philox: counter "
        "low, counter high, key) before its 128-bit counter moves on by 256 * delta.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &scalar));
      c->set_output(0, PartialTensorShape({3}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("RngSkip")
    .Input("resource: resource")
    .Input("algorithm: int64")
    .Input("delta: int64")
    .SetIsStateful()
    .Doc("RngReadAndSkip without the read (TF 2.0's form).")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
      return c->WithRank(c->input(2), 0, &scalar);
    });

TW_REGISTER_OP("RandomShuffle")
    .Input("value: T")
    .Output("output: T")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("T: type")
    .SetIsStateful()
    .Doc("The value with its first dimension randomly permuted.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("StatelessShuffle")
    .Input("value: T")
    .Input("key: uint64")
    .Input("counter: uint64")
    .Input("alg: int32")
    .Output("output: T")
    .Attr("T: type")
    .Doc(
        "RandomShuffle's permutation drawn from the stateless stream of key and counter "
        "(tf.random.experimental.stateless_shuffle).")
    .SetShapeFn(shape_fns::UnchangedShape);

// RandomGamma, RandomPoisson and RandomPoissonV2: shape's samples of each
// distribution parameter, [shape..., param's shape...].
absl::Status SamplesPerParameterShape(InferenceContext* c) {
  TW_ASSIGN_OR_RETURN(PartialTensorShape samples, c->MakeShapeFromShapeTensor(0));
  c->set_output(0, samples.Concatenate(c->input(1)));
  return absl::OkStatus();
}

TW_REGISTER_OP("RandomGamma")
    .Input("shape: S")
    .Input("alpha: T")
    .Output("output: T")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("S: {int32, int64}")
    .Attr("T: {half, float, double}")
    .SetIsStateful()
    .Doc("Gamma(alpha, 1) samples of each alpha (Marsaglia and Tsang), TF's for the same seeds.")
    .SetShapeFn(SamplesPerParameterShape);

TW_REGISTER_OP("RandomPoisson")
    .Input("shape: S")
    .Input("rate: dtype")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("S: {int32, int64}")
    .Attr("dtype: {half, float, double}")
    .SetIsStateful()
    .Deprecated(25, "Replaced by RandomPoissonV2")
    .Doc("Poisson(rate) samples of each rate, in rate's type (TF 1's first form).")
    .SetShapeFn(SamplesPerParameterShape);

TW_REGISTER_OP("RandomPoissonV2")
    .Input("shape: S")
    .Input("rate: R")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("S: {int32, int64}")
    .Attr("R: {half, float, double, int32, int64} = DT_DOUBLE")
    .Attr("dtype: {half, float, double, int32, int64} = DT_INT64")
    .SetIsStateful()
    .Doc(
        "Poisson(rate) samples of each rate (Knuth's below 10, Hormann's above), TF's for the "
        "same seeds.")
    .SetShapeFn(SamplesPerParameterShape);

// tf.random.stateless_gamma and stateless_poisson: the shape input ends with
// the parameter's shape.
TW_REGISTER_OP("StatelessRandomGammaV2")
    .Input("shape: T")
    .Input("seed: Tseed")
    .Input("alpha: dtype")
    .Output("output: dtype")
    .Attr("dtype: {half, float, double}")
    .Attr("T: {int32, int64}")
    .Attr("Tseed: {int32, int64} = DT_INT64")
    .Doc("Gamma(alpha, 1) samples from the seed pair [2], TF's numbers.")
    .SetShapeFn(RandomShape);

TW_REGISTER_OP("StatelessRandomGammaV3")
    .Input("shape: shape_dtype")
    .Input("key: uint64")
    .Input("counter: uint64")
    .Input("alg: int32")
    .Input("alpha: dtype")
    .Output("output: dtype")
    .Attr("dtype: {half, float, double}")
    .Attr("shape_dtype: {int32, int64} = DT_INT32")
    .Doc("Gamma(alpha, 1) samples from a Philox key and counter, TF's numbers.")
    .SetShapeFn(RandomShape);

TW_REGISTER_OP("StatelessRandomPoisson")
    .Input("shape: T")
    .Input("seed: Tseed")
    .Input("lam: Rtype")
    .Output("output: dtype")
    .Attr("Rtype: {half, float, double, int32, int64}")
    .Attr("dtype: {half, float, double, int32, int64}")
    .Attr("T: {int32, int64}")
    .Attr("Tseed: {int32, int64} = DT_INT64")
    .Doc("Poisson(lam) samples from the seed pair [2], TF's numbers.")
    .SetShapeFn(RandomShape);

TW_REGISTER_OP("StatelessRandomBinomial")
    .Input("shape: S")
    .Input("seed: Tseed")
    .Input("counts: T")
    .Input("probs: T")
    .Output("output: dtype")
    .Attr("S: {int32, int64}")
    .Attr("Tseed: {int32, int64} = DT_INT64")
    .Attr("T: {half, float, double, int32, int64} = DT_DOUBLE")
    .Attr("dtype: {half, float, double, int32, int64} = DT_INT64")
    .Doc(
        "Binomial(counts, probs) samples from the seed pair [2] (counts and probs broadcast to "
        "the shape's last dimensions), TF's numbers.")
    .SetShapeFn(RandomShape);

// tf.random.Generator's draws (kernels/cpu/stateless_random_ops.cc): the
// algorithm a scalar, the shape from the shape input.
absl::Status StatefulRandomShape(InferenceContext* c) {
  PartialTensorShape scalar;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
  TW_ASSIGN_OR_RETURN(PartialTensorShape out, c->MakeShapeFromShapeTensor(2));
  c->set_output(0, out);
  return absl::OkStatus();
}

// StatefulUniform, StatefulStandardNormalV2 and StatefulTruncatedNormal
// differ in their draws alone.
[[maybe_unused]] const bool kStatefulFloatDraws = [] {
  for (const auto& [name, doc] : std::initializer_list<std::pair<const char*, const char*>>{
           {"StatefulUniform", "Uniform [0, 1) draws"},
           {"StatefulStandardNormalV2", "Standard normal draws"},
           {"StatefulTruncatedNormal", "Normal draws within 2 of 0"}}) {
    RegisterOp(OpDefBuilder(name, __FILE__)
                   .Input("resource: resource")
                   .Input("algorithm: int64")
                   .Input("shape: shape_dtype")
                   .Output("output: dtype")
                   .Attr("dtype: type = DT_FLOAT")
                   .Attr("shape_dtype: type = DT_INT64")
                   .SetIsStateful()
                   .Doc(absl::StrCat(doc, " from the generator's state, which moves on past them."))
                   .SetShapeFn(StatefulRandomShape));
  }
  return true;
}();

TW_REGISTER_OP("StatefulUniformInt")
    .Input("resource: resource")
    .Input("algorithm: int64")
    .Input("shape: shape_dtype")
    .Input("minval: dtype")
    .Input("maxval: dtype")
    .Output("output: dtype")
    .Attr("dtype: type = DT_INT64")
    .Attr("shape_dtype: type = DT_INT64")
    .SetIsStateful()
    .Doc("Integers in [minval, maxval) from the generator's state, which moves on past them.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(3), 0, &scalar));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(4), 0, &scalar));
      return StatefulRandomShape(c);
    });

TW_REGISTER_OP("StatefulUniformFullInt")
    .Input("resource: resource")
    .Input("algorithm: int64")
    .Input("shape: shape_dtype")
    .Output("output: dtype")
    .Attr("dtype: type = DT_UINT64")
    .Attr("shape_dtype: type = DT_INT64")
    .SetIsStateful()
    .Doc("Integers over dtype's range from the generator's state, which moves on past them.")
    .SetShapeFn(StatefulRandomShape);

TW_REGISTER_OP("StatefulRandomBinomial")
    .Input("resource: resource")
    .Input("algorithm: int64")
    .Input("shape: S")
    .Input("counts: T")
    .Input("probs: T")
    .Output("output: dtype")
    .Attr("S: {int32, int64}")
    .Attr("T: {half, float, double, int32, int64} = DT_DOUBLE")
    .Attr("dtype: {half, float, double, int32, int64} = DT_INT64")
    .SetIsStateful()
    .Doc("Binomial(counts, probs) samples from the generator's state, which moves on past them.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
      TW_ASSIGN_OR_RETURN(PartialTensorShape out, c->MakeShapeFromShapeTensor(2));
      c->set_output(0, out);
      return absl::OkStatus();
    });

TW_REGISTER_OP("NonDeterministicInts")
    .Input("shape: shape_dtype")
    .Output("output: dtype")
    .Attr("dtype: type = DT_INT64")
    .Attr("shape_dtype: type = DT_INT64")
    .SetIsStateful()
    .Doc("Integers from the system's entropy (tf.random.Generator.from_non_deterministic_state).")
    .SetShapeFn([](InferenceContext* c) {
      TW_ASSIGN_OR_RETURN(PartialTensorShape out, c->MakeShapeFromShapeTensor(0));
      c->set_output(0, out);
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
