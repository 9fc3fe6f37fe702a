#include "ops/initializers.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/tensor_proto_util.h"
#include "graph/random_seed.h"
#include "ops/const_op.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/random_ops.h"

namespace towerflow {
namespace initializers {
namespace {

// The variable's shape as an int32 Const (TensorFlow's `shape` input of
// random ops), named "shape" in `scope`.
Output ShapeConst(const Scope& scope, const TensorShape& shape) {
  std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  const bool fits = std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d <= INT32_MAX; });
  if (fits) {
    std::vector<int32_t> dims32(dims.begin(), dims.end());
    return ops::Const(
        scope.WithOpName("shape"),
        MakeTensorProto<int32_t>(absl::MakeConstSpan(dims32), TensorShape({shape.dims()})));
  }
  return ops::Const(
      scope.WithOpName("shape"),
      MakeTensorProto<int64_t>(absl::MakeConstSpan(dims), TensorShape({shape.dims()})));
}

// A scalar of `dtype` named `name`: a Const of that type, or for half and
// bfloat16 a double Const cast to it.
Output ScalarConst(const Scope& scope, const char* name, double value, DataType dtype) {
  if (dtype == DT_FLOAT) return ops::Const(scope.WithOpName(name), static_cast<float>(value));
  if (dtype == DT_DOUBLE) return ops::Const(scope.WithOpName(name), value);
  return ops::Cast(scope.WithOpName(name), ops::Const(scope, value), dtype);
}

bool RequireFloating(const Scope& scope, const char* what, DataType dtype) {
  if (DataTypeIsFloating(dtype)) return true;
  scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
      what, " initializer needs a floating-point dtype, got ", DataTypeString(dtype))));
  return false;
}

// rnd * scale + offset, TensorFlow's layout of random_normal & co.:
// <name>/shape, <name>/<param names>, <name>/<RandomOp>, <name>/mul, <name>.
template <typename RandomOp>
Output ScaledRandom(const Scope& scope, const char* name, const TensorShape& shape, DataType dtype,
                    double scale, double offset, const char* scale_name, const char* offset_name,
                    std::optional<int64_t> seed) {
  const Scope::CompositeOpScopes scopes = scope.GetCompositeOpScopes(name);
  const Scope& s = scopes.child;
  const Output shape_t = ShapeConst(s, shape);
  const Output offset_t = ScalarConst(s, offset_name, offset, dtype);
  const Output scale_t = ScalarConst(s, scale_name, scale, dtype);
  const auto [seed1, seed2] = GetSeeds(*scope.graph(), seed);
  const Output rnd =
      RandomOp(s, shape_t, dtype, typename RandomOp::Attrs().Seed(seed1).Seed2(seed2));
  const Output mul = ops::Mul(s.WithOpName("mul"), rnd, scale_t);
  return ops::AddV2(scopes.last, mul, offset_t);
}

}  // namespace

void ComputeFans(const TensorShape& shape, double* fan_in, double* fan_out) {
  const int rank = shape.dims();
  if (rank < 1) {
    *fan_in = *fan_out = 1;
  } else if (rank == 1) {
    *fan_in = *fan_out = static_cast<double>(shape.dim_size(0));
  } else if (rank == 2) {
    *fan_in = static_cast<double>(shape.dim_size(0));
    *fan_out = static_cast<double>(shape.dim_size(1));
  } else {
    double receptive = 1;
    for (int i = 0; i < rank - 2; ++i) receptive *= static_cast<double>(shape.dim_size(i));
    *fan_in = static_cast<double>(shape.dim_size(rank - 2)) * receptive;
    *fan_out = static_cast<double>(shape.dim_size(rank - 1)) * receptive;
  }
}

Initializer Constant(const Input::Initializer& value) {
  return Initializer(
      "Const", [value](const Scope& scope, const TensorShape& shape, DataType dtype) -> Output {
        if (!value.status().ok()) {
          scope.UpdateStatus(value.status());
          return Output();
        }
        absl::StatusOr<TensorProto> converted = ConvertTensorProto(value.tensor(), dtype);
        if (!converted.ok()) {
          scope.UpdateStatus(converted.status());
          return Output();
        }
        absl::StatusOr<TensorShape> given = TensorProtoShape(*converted);
        if (!given.ok()) {
          scope.UpdateStatus(given.status());
          return Output();
        }
        if (given->num_elements() == 1 && shape.num_elements() != 1) {
          // A scalar fills the variable: TensorFlow writes it compactly.
          converted->mutable_tensor_shape()->Clear();
          shape.AsProto(converted->mutable_tensor_shape());
          return ops::Const(scope, Input::Initializer(*converted));
        }
        return ops::Const(scope, Input::Initializer(*converted), shape);
      });
}

Initializer Zeros() { return Constant(0); }
Initializer Ones() { return Constant(1); }

Initializer RandomUniform(double minval, double maxval, std::optional<int64_t> seed) {
  return Initializer("random_uniform",
                     [=](const Scope& scope, const TensorShape& shape, DataType dtype) -> Output {
                       if (!RequireFloating(scope, "RandomUniform", dtype)) return Output();
                       // TensorFlow: rnd * (max - min) + min.
                       return ScaledRandom<ops::RandomUniform>(scope, "random_uniform", shape,
                                                               dtype, maxval - minval, minval,
                                                               "range", "min", seed);
                     });
}

Initializer RandomNormal(double mean, double stddev, std::optional<int64_t> seed) {
  return Initializer(
      "random_normal", [=](const Scope& scope, const TensorShape& shape, DataType dtype) -> Output {
        if (!RequireFloating(scope, "RandomNormal", dtype)) return Output();
        return ScaledRandom<ops::RandomStandardNormal>(scope, "random_normal", shape, dtype, stddev,
                                                       mean, "stddev", "mean", seed);
      });
}

Initializer TruncatedNormal(double stddev, double mean, std::optional<int64_t> seed) {
  return Initializer("truncated_normal",
                     [=](const Scope& scope, const TensorShape& shape, DataType dtype) -> Output {
                       if (!RequireFloating(scope, "TruncatedNormal", dtype)) return Output();
                       return ScaledRandom<ops::TruncatedNormal>(scope, "truncated_normal", shape,
                                                                 dtype, stddev, mean, "stddev",
                                                                 "mean", seed);
                     });
}

Initializer VarianceScaling(double scale, FanMode mode, Distribution distribution,
                            std::optional<int64_t> seed) {
  return Initializer("variance_scaling",
                     [=](const Scope& scope, const TensorShape& shape, DataType dtype) -> Output {
                       if (!(scale > 0)) {
                         scope.UpdateStatus(absl::InvalidArgumentError(
                             absl::StrCat("VarianceScaling needs a positive scale, got ", scale)));
                         return Output();
                       }
                       double fan_in, fan_out;
                       ComputeFans(shape, &fan_in, &fan_out);
                       double s = scale;
                       switch (mode) {
                         case FanMode::kFanIn:
                           s /= std::max(1.0, fan_in);
                           break;
                         case FanMode::kFanOut:
                           s /= std::max(1.0, fan_out);
                           break;
                         case FanMode::kFanAvg:
                           s /= std::max(1.0, (fan_in + fan_out) / 2.0);
                           break;
                       }
                       // The stddev of a standard normal truncated to [-2, 2].
                       constexpr double kTruncatedStddev = 0.87962566103423978;
                       const Scope vs = scope.NewSubScope("variance_scaling");
                       switch (distribution) {
                         case Distribution::kTruncatedNormal:
                           return TruncatedNormal(std::sqrt(s) / kTruncatedStddev, 0.0, seed)(
                               vs, shape, dtype);
                         case Distribution::kUntruncatedNormal:
                           return RandomNormal(0.0, std::sqrt(s), seed)(vs, shape, dtype);
                         case Distribution::kUniform: {
                           const double limit = std::sqrt(3.0 * s);
                           return RandomUniform(-limit, limit, seed)(vs, shape, dtype);
                         }
                       }
                       return Output();
                     });
}

Initializer GlorotUniform(std::optional<int64_t> seed) {
  return VarianceScaling(1.0, FanMode::kFanAvg, Distribution::kUniform, seed);
}

Initializer HeNormal(std::optional<int64_t> seed) {
  return VarianceScaling(2.0, FanMode::kFanIn, Distribution::kTruncatedNormal, seed);
}

}  // namespace initializers
}  // namespace towerflow
