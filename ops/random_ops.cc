// Random ops. `seed` and `seed2` pick a reproducible stream; both 0 means a
// fresh random stream per kernel (graph/random_seed.h derives them from a
// graph-level seed, as tf.set_random_seed does).
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

TW_REGISTER_OP("RandomShuffle")
    .Input("value: T")
    .Output("output: T")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("T: type")
    .SetIsStateful()
    .Doc("The value with its first dimension randomly permuted.")
    .SetShapeFn(shape_fns::UnchangedShape);

}  // namespace
}  // namespace towerflow
