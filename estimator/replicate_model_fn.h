// ReplicateModelFn: TF's tf.contrib.estimator.replicate_model_fn. Turns a
// single-device model_fn into one that builds a tower per device.
//
//   ReplicateOptions options;
//   options.devices = {"/cpu:0", "/cpu:1"};   // empty: every GPU, else the CPU
//   TW_ASSIGN_OR_RETURN(ModelFn replicated, ReplicateModelFn(MyModel, options));
//   EstimatorSpec spec = replicated(root, features, labels, ModeKeys::kTrain, params);
//
// The replicated model_fn, as TF's:
// - splits every feature and label along the batch (dimension 0) under
//   "split_inputs/" on the consolidation device: the only device when it is
//   a single GPU, else "/device:CPU:0". A batch that does not divide by the
//   number of towers is InvalidArgument "Batch size N needs to be divisible
//   by the number of GPUs, which is K." unless `uneven_batches`;
// - calls model_fn once per device: tower 0 with no name prefix, tower i
//   under "tower_i/", towers after the first reusing the variables (variable
//   scope reuse). A device setter puts variable ops on the parameter-server
//   device(s) (the consolidation device; every tower's device in turn with
//   kRoundRobin) and every other op on the tower's device; a device the
//   model_fn sets explicitly is merged in and wins. Params::tower_index
//   tells model_fn which tower it builds;
// - reports `loss` = AddN of the tower losses on the consolidation device.
//   kSum adds them; every other reduction (TF's default
//   kSumByNonzeroWeights, and kMean) first divides each by the number of
//   towers ("averaged_loss"), for the gradients too, so the towers average;
//   kNone is refused;
// - TRAIN: towers must use TowerOptimizer (with several devices), which
//   sums the gradients per variable and applies once. train_op runs every
//   tower's train op and the update ops (GraphKeys::kUpdateOps, e.g. batch
//   norm moving averages) of every tower, or of tower 0 only with
//   `update_ops_from_first_tower_only` (what the CIFAR-10 tutorial did);
// - EVAL: every tower's metric updates run, then the metric variables of
//   towers 1..n-1 are added into tower 0's and zeroed, so the reduction is
//   idempotent; metric values are tower 0's. Towers whose metrics differ
//   are refused with TF's error ("Different `EstimatorSpec.eval_metric_ops`
//   across `model_fn()` calls. Expected 8 local variables, but got 10
//   instead.");
// - PREDICT: predictions concatenated along the batch, per key over the
//   towers that return it (a key only some towers return has only their
//   rows, as TF's _concat_tensor_dicts); export outputs likewise, per
//   signature key and output, keeping their kind (predict outputs,
//   regression values, classification scores — and classes, which TF
//   stacks into a shape TF Serving refuses).
//
// Beyond TF, `aggregation = kAllReduce` keeps every trainable variable
// mirrored on every tower's device instead of once on a parameter server,
// as tf.distribute.MirroredStrategy with NCCL does:
// - tower 0 creates the variables as model_fn names them, on its device;
//   when tower i > 0 asks for a trainable variable it gets its mirror
//   "<name>/replica_i" on its own device. A mirror is a local variable
//   (kLocalVariables, never saved) whose initializer copies tower 0's
//   variable: run LocalVariablesInitializer after the global initializer or
//   a restore, as the Estimator does. Checkpoints thus hold one copy, and
//   load into either aggregation and any number of towers;
// - TowerOptimizer all-reduces each variable's gradients (NcclAllReduce:
//   NCCL on GPUs, the CPU kernel across CPU devices) and applies the sums to
//   every mirror, each on its own device, in one optimizer step, so the
//   mirrors stay equal and the global step advances once. A mirror's
//   optimizer slots ("<name>/replica_i/Momentum") are local as well and
//   start from the variable's own slots;
// - variables that are not trainable (the global step, batch-norm moving
//   averages, metrics) are not mirrored: one copy, on tower 0's device.
//
// Beyond TF, `uneven_batches` splits a batch of B over n towers as evenly as
// possible (sizes differ by at most one) and weighs tower i's loss by
// n * b_i / B, so that for losses that are means over their examples the
// SUM and MEAN reductions give exactly what an even split would.
#ifndef TOWERFLOW_ESTIMATOR_REPLICATE_MODEL_FN_H_
#define TOWERFLOW_ESTIMATOR_REPLICATE_MODEL_FN_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator/model_fn.h"
#include "graph/device_setter.h"  // LocalDeviceSetter
#include "graph/scope.h"

namespace towerflow {

// TF's tf.losses.Reduction values that replicate_model_fn takes. It sums
// the tower losses for kSum and averages them for every other value; kNone
// is refused.
enum class LossReduction { kSumByNonzeroWeights, kSum, kMean, kNone };

enum class VariablePlacement {
  kConsolidationDevice,  // every variable on the consolidation device
  kRoundRobin,           // variables spread over the tower devices in turn
};

// How the towers' gradients become one update (see the file comment).
enum class GradientAggregation {
  kParameterServer,  // summed on each variable's (parameter-server) device
  kAllReduce,        // all-reduced between mirrors on every tower's device
};

struct ReplicateOptions {
  // Any TF spelling ("/gpu:1", "/device:CPU:0"); empty: every local GPU,
  // or the CPU when there is none.
  std::vector<std::string> devices;
  // TF's default: the towers' losses (and gradients) are averaged.
  LossReduction loss_reduction = LossReduction::kSumByNonzeroWeights;
  VariablePlacement variable_placement = VariablePlacement::kConsolidationDevice;
  bool uneven_batches = false;
  bool update_ops_from_first_tower_only = false;
  // kAllReduce places every variable on its tower's device, so it takes no
  // variable_placement other than the default.
  GradientAggregation aggregation = GradientAggregation::kParameterServer;
  // Under mpirun (a distribute::Cluster of several processes), training
  // replicates over the towers of every process: each process's summed
  // gradients are summed again over the processes (one MpiAllReduce on the
  // host, Horovod's tensor fusion up to fusion_threshold_bytes; sparse
  // gradients densified), averaging reductions divide by every tower of
  // every process, and the reported loss is the cluster's. Processes whose
  // batches differ in size (the ends of their inputs) weigh each tower's
  // loss by its share of all the processes' rows, so a step is one step on
  // the union of their batches. false keeps each process's towers to itself.
  bool across_processes = true;
  int64_t fusion_threshold_bytes = int64_t{64} << 20;
  // Where the gradient sums cross processes: false, on the host (MPI);
  // true, on the GPU that holds the first of them (NCCL: a communicator per
  // GPU ordinal spanning the processes, bootstrapped over MPI). The NCCL path
  // is compiled (--config=cuda) but has not run yet: no machine with GPUs in
  // several processes has been available.
  bool nccl_across_processes = false;
};

// InvalidArgument for kNone, an unparsable device, or kAllReduce with
// kRoundRobin or with a device named twice. (All-reduce needs its towers on
// distinct devices when the graph runs too: NCCL takes one member per GPU,
// so towers that soft placement puts on one GPU fail the step.)
absl::StatusOr<ModelFn> ReplicateModelFn(ModelFn model_fn, const ReplicateOptions& options = {});

// The replicated model_fn of ReplicateModelFn over inputs that the caller
// has already split: features[i] and labels[i] (or no labels at all) are
// tower i's, typically placeholders on tower i's device that the host
// feeds with its shard, as TF's Keras tpu_model feeds its per-shard infeed
// placeholders. Everything else is ReplicateModelFn's. The shards must
// hold equal batches, except with `uneven_batches`, where tower i's loss is
// weighed by n * b_i / B with b_i the rows of its first feature (by name)
// at run time.
using ShardedModelFn = std::function<EstimatorSpec(
    const Scope& root, const std::vector<FeatureMap>& features,
    const std::vector<FeatureMap>& labels, ModeKeys mode, const Params& params)>;
absl::StatusOr<ShardedModelFn> ReplicateShardedModelFn(ModelFn model_fn,
                                                       const ReplicateOptions& options = {});

// The devices ReplicateModelFn would use for `options`, canonical
// ("/device:GPU:0").
absl::StatusOr<std::vector<std::string>> ReplicationDevices(const ReplicateOptions& options);

}  // namespace towerflow

#endif  // TOWERFLOW_ESTIMATOR_REPLICATE_MODEL_FN_H_
