// BatchNormalization and LayerNormalization (tf.layers normalization.py,
// Keras's LayerNormalization).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/collections.h"
#include "graph/replica_context.h"
#include "layers/layer_util.h"
#include "layers/layers.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nccl_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/state_ops.h"

namespace towerflow {
namespace layers {

using internal::AddWeight;
using internal::LayerError;
using internal::LayerScope;

namespace {

initializers::Initializer Or(const initializers::Initializer& given,
                             initializers::Initializer fallback) {
  return given.valid() ? given : std::move(fallback);
}

// The mean and (biased) variance over `axes`, kept as size-1 dimensions:
// TF's nn.moments, with the variance taken around a gradient-stopped mean.
struct Moments {
  Output mean;
  Output variance;
};
Moments ComputeMoments(const Scope& scope, const Output& x, const std::vector<int64_t>& axes) {
  const Scope s = scope.NewSubScope("moments");
  Output axes_t = internal::VectorConst(s, axes);
  Output mean = ops::Mean(s, x, axes_t, ops::Mean::KeepDims(true));
  Output variance = ops::Mean(s, ops::SquaredDifference(s, x, ops::StopGradient(s, mean)), axes_t,
                              ops::Mean::KeepDims(true));
  return {mean, variance};
}

// ComputeMoments over every tower's and process's batch (Synchronised batch
// norm in layers.h): each tower's [sum, sum of squares] per channel and its
// count are summed over the towers and the processes; then mean = sum / n
// and variance = sumsq / n - mean^2 (at least 0), shaped as
// ComputeMoments's.
Moments GlobalMoments(const Scope& scope, const Output& x, const std::vector<int64_t>& axes,
                      int64_t channels, int num_towers, bool across_processes,
                      const std::string& shared_name) {
  const Scope s = scope.NewSubScope("sync_moments");
  Output axes_t = internal::VectorConst(s, axes);
  const DataType dtype = x.type();
  Output count = ops::RealDiv(s, ops::Cast(s, ops::Size(s, x, ops::Size::OutType(DT_INT64)), dtype),
                              ops::Cast(s, ops::Const(s, channels), dtype));
  Output local = ops::ConcatV2(s,
                               {ops::Sum(s, x, axes_t), ops::Sum(s, ops::Square(s, x), axes_t),
                                ops::Reshape(s, count, ops::Const(s, {int64_t{1}}))},
                               ops::Const(s, 0));
  Output global = local;
  if (num_towers > 1) {
    global = ops::NcclAllReduce(s.WithOpName("towers"), global, "sum", num_towers, shared_name);
  }
  if (across_processes) {
    global =
        ops::MpiAllReduce(s.WithDevice("/device:CPU:0").WithOpName("processes"), {global}).sum[0];
  }
  const auto part = [&](int64_t begin, int64_t size) {
    return ops::Slice(s, global, ops::Const(s, {begin}), ops::Const(s, {size}));
  };
  Output n = part(2 * channels, 1);
  Output mean = ops::RealDiv(s, part(0, channels), n);
  Output variance = ops::Maximum(
      s, ops::Sub(s, ops::RealDiv(s, part(channels, channels), n), ops::Square(s, mean)),
      ops::ZerosLike(s, mean));
  // As ComputeMoments's, size-1 dimensions kept.
  std::vector<int64_t> kept(x.shape().dims(), 1);
  for (int d = 0; d < x.shape().dims(); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept[d] = channels;
  }
  Output shape = internal::VectorConst(s, kept);
  return {ops::Reshape(s, mean, shape), ops::Reshape(s, variance, shape)};
}

// (x - mean) * rsqrt(variance + epsilon) * gamma + beta, as TF's
// nn.batch_normalization computes it: x * inv + (beta - mean * inv).
// gamma and beta may be invalid (scale, center off).
Output Normalize(const Scope& s, const Output& x, const Output& mean, const Output& variance,
                 const Output& gamma, const Output& beta, double epsilon) {
  Output inv = ops::Rsqrt(s, ops::AddV2(s, variance, epsilon));
  if (gamma.valid()) inv = ops::Mul(s, inv, gamma);
  Output shift = ops::Mul(s, mean, inv);
  shift = beta.valid() ? Output(ops::Sub(s, beta, shift)) : Output(ops::Neg(s, shift));
  return ops::AddV2(s, ops::Mul(s, x, inv), shift);
}

// m -= (m - value) * decay, added to kUpdateOps (Keras's
// _assign_moving_average, named "AssignMovingAvg").
void AddMovingAverageUpdate(const Scope& s, const Variable& moving, const Output& value,
                            const Output& decay) {
  const Scope a = s.NewSubScope("AssignMovingAvg");
  Output delta = ops::Mul(a, ops::Sub(a, moving.value(a), value), decay);
  ops::AssignSubVariableOp update(a, moving.handle(), delta);
  if (a.ok()) AddToCollection(s.graph(), GraphKeys::kUpdateOps, update.operation);
}

}  // namespace

Output BatchNormalization(const Scope& scope, const Output& inputs,
                          const BatchNormalizationOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LayerScope(scope, options.name, "batch_normalization");
  if (!internal::ValidInput(s, inputs)) return Output();
  const int rank = inputs.shape().dims();
  if (rank < 2) {
    LayerError(s, absl::StrCat("BatchNormalization needs inputs of known rank 2 or more, got "
                               "shape ",
                               inputs.shape().DebugString()));
    return Output();
  }
  const int axis = options.axis < 0 ? rank + options.axis : options.axis;
  if (axis < 0 || axis >= rank) {
    LayerError(s, absl::StrCat("Invalid axis: ", options.axis, " for inputs of rank ", rank));
    return Output();
  }
  if (!(options.momentum >= 0 && options.momentum <= 1) || !(options.epsilon > 0)) {
    LayerError(s, absl::StrCat("momentum must be in [0, 1] and epsilon positive, got ",
                               options.momentum, " and ", options.epsilon));
    return Output();
  }
  const int64_t channels = internal::KnownDim(s, inputs, axis, "feature axis");
  if (channels < 0) return Output();
  const DataType dtype = inputs.type();
  const bool fusable =
      rank == 4 && (axis == 1 || axis == 3) && dtype == DT_FLOAT && !options.synchronized;
  const bool fused = options.fused.value_or(fusable);
  const ReplicaContext replica = CurrentReplicaContext();
  const int num_towers = options.num_towers.value_or(replica.num_replicas);
  const int tower_index = options.tower_index.value_or(replica.replica_id);
  if (options.synchronized && (num_towers < 1 || tower_index < 0 || tower_index >= num_towers)) {
    LayerError(s, absl::StrCat("synchronized batch norm: tower ", tower_index, " of ", num_towers));
    return Output();
  }
  if (fused && !fusable) {
    LayerError(s, options.synchronized
                      ? std::string("synchronized batch norm is unfused (fused = false)")
                      : absl::StrCat("fused batch norm needs 4-D float inputs normalized over "
                                     "axis 1 or 3, got shape ",
                                     inputs.shape().DebugString(), " and axis ", options.axis));
    return Output();
  }

  const TensorShape param_shape({channels});
  Variable gamma, beta;
  if (options.scale) {
    gamma = AddWeight(
        s, {"gamma", param_shape, dtype, Or(options.gamma_initializer, initializers::Ones()),
            options.gamma_regularizer, options.trainable});
  }
  if (options.center) {
    beta = AddWeight(
        s, {"beta", param_shape, dtype, Or(options.beta_initializer, initializers::Zeros()),
            options.beta_regularizer, options.trainable});
  }
  Variable moving_mean = AddWeight(s, {"moving_mean",
                                       param_shape,
                                       dtype,
                                       Or(options.moving_mean_initializer, initializers::Zeros()),
                                       {},
                                       /*trainable=*/false});
  Variable moving_variance =
      AddWeight(s, {"moving_variance",
                    param_shape,
                    dtype,
                    Or(options.moving_variance_initializer, initializers::Ones()),
                    {},
                    /*trainable=*/false});
  if (!s.ok()) return Output();

  const TrainingFlag& training = options.training;
  // The moving averages follow the batch's statistics in training, with
  // decay 1 - momentum; with a training tensor the updates always run, with
  // decay 0 and the moving statistics themselves when not training (TF's
  // smart_cond on the momentum and on the statistics).
  // Synchronised, the towers' statistics are the same: tower 0 alone
  // updates the moving averages.
  const bool update =
      (training.is_tensor() || training.value()) && !(options.synchronized && tower_index > 0);
  Output decay;
  if (update) {
    decay = ops::Cast(s, ops::Const(s, 1 - options.momentum), dtype);
    if (training.is_tensor()) {
      decay = ops::SelectV2(s, training.tensor(), decay, ops::ZerosLike(s, decay));
    }
  }
  using Outputs = std::vector<Output>;
  // Each branch returns {y, mean, variance} with the statistics as [channels].
  ops::BranchFn train_fn, infer_fn;
  if (fused) {
    const std::string format = axis == 1 ? "NCHW" : "NHWC";
    // FusedBatchNormV3 wants scale and offset: ones and zeros stand in.
    Output scale =
        options.scale ? gamma.value() : internal::VectorConst(s, std::vector<float>(channels, 1));
    Output offset =
        options.center ? beta.value() : internal::VectorConst(s, std::vector<float>(channels, 0));
    const auto attrs =
        ops::FusedBatchNormV3::Epsilon(static_cast<float>(options.epsilon)).DataFormat(format);
    Output mean = moving_mean.value(), variance = moving_variance.value();
    train_fn = [=](const Scope& t) -> absl::StatusOr<Outputs> {
      ops::FusedBatchNormV3 bn(t.WithOpName("FusedBatchNormV3"), inputs, scale, offset, mean,
                               variance, attrs.IsTraining(true));
      return Outputs{bn.y, bn.batch_mean, bn.batch_variance};
    };
    infer_fn = [=](const Scope& t) -> absl::StatusOr<Outputs> {
      ops::FusedBatchNormV3 bn(t.WithOpName("FusedBatchNormV3"), inputs, scale, offset, mean,
                               variance, attrs.IsTraining(false));
      return Outputs{bn.y, mean, variance};
    };
  } else {
    // Unfused: moments over every axis but `axis`; parameters broadcast as
    // [1, ..., channels, ..., 1].
    std::vector<int64_t> reduction_axes, broadcast_shape(rank, 1);
    for (int d = 0; d < rank; ++d) {
      if (d != axis) reduction_axes.push_back(d);
    }
    broadcast_shape[axis] = channels;
    const auto broadcast = [=](const Scope& t, const Output& v) {
      return axis == rank - 1 ? v : ops::Reshape(t, v, internal::VectorConst(t, broadcast_shape));
    };
    Output g = options.scale ? broadcast(s, gamma.value()) : Output();
    Output b = options.center ? broadcast(s, beta.value()) : Output();
    const double epsilon = options.epsilon;
    Output mean = moving_mean.value(), variance = moving_variance.value();
    const std::string sync_name = moving_mean.name() + "/sync_statistics";
    train_fn = [=](const Scope& t) -> absl::StatusOr<Outputs> {
      const Moments m = options.synchronized
                            ? GlobalMoments(t, inputs, reduction_axes, channels, num_towers,
                                            options.across_processes, sync_name)
                            : ComputeMoments(t, inputs, reduction_axes);
      Output flat = ops::Const(t, {channels});
      return Outputs{Normalize(t, inputs, m.mean, m.variance, g, b, epsilon),
                     ops::Reshape(t, m.mean, flat), ops::Reshape(t, m.variance, flat)};
    };
    infer_fn = [=](const Scope& t) -> absl::StatusOr<Outputs> {
      return Outputs{
          Normalize(t, inputs, broadcast(t, mean), broadcast(t, variance), g, b, epsilon), mean,
          variance};
    };
  }
  const Outputs out = internal::CondByTraining(s, training, train_fn, infer_fn);
  if (out.empty()) return Output();
  if (update) {
    AddMovingAverageUpdate(s, moving_mean, out[1], decay);
    AddMovingAverageUpdate(s, moving_variance, out[2], decay);
  }
  return out[0];
}

Output LayerNormalization(const Scope& scope, const Output& inputs,
                          const LayerNormalizationOptions& options) {
  if (!scope.ok()) return Output();
  const Scope s = LayerScope(scope, options.name, "layer_normalization");
  if (!internal::ValidInput(s, inputs)) return Output();
  if (!(options.epsilon > 0)) {
    LayerError(s, absl::StrCat("epsilon must be positive, got ", options.epsilon));
    return Output();
  }
  const int64_t features = internal::KnownDim(s, inputs, -1, "last dimension");
  if (features < 0) return Output();
  const int rank = inputs.shape().dims();
  const TensorShape param_shape({features});
  Output gamma, beta;
  if (options.scale) {
    gamma = AddWeight(s, {"gamma", param_shape, inputs.type(),
                          Or(options.gamma_initializer, initializers::Ones()),
                          options.gamma_regularizer, options.trainable})
                .value();
  }
  if (options.center) {
    beta = AddWeight(s, {"beta", param_shape, inputs.type(),
                         Or(options.beta_initializer, initializers::Zeros()),
                         options.beta_regularizer, options.trainable})
               .value();
  }
  if (!s.ok()) return Output();
  const Moments m = ComputeMoments(s, inputs, {rank - 1});
  return Normalize(s, inputs, m.mean, m.variance, gamma, beta, options.epsilon);
}

}  // namespace layers
}  // namespace towerflow
