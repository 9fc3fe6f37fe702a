#include "layers/recurrent.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "layers/layer_util.h"
#include "ops/const_op.h"
#include "ops/control_flow.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/logging_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/tensor_array.h"

namespace towerflow {
namespace layers {
namespace {

using internal::AddWeight;
using internal::WeightSpec;

// inputs . kernel + bias over [inputs, state] concatenated, the weights
// `kernel` [depth, units] and `bias` [units] under `scope`.
absl::StatusOr<Output> Linear(const Scope& scope, const std::vector<Output>& args, int64_t units,
                              const initializers::Initializer& kernel_init,
                              const initializers::Initializer& bias_init) {
  int64_t depth = 0;
  for (const Output& a : args) {
    if (a.shape().unknown_rank() || a.shape().dims() != 2 || a.shape().dim_size(1) < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          scope.GetUniqueNameForOp("linear"), ": RNN cell inputs need a known depth, got shape ",
          a.shape().DebugString()));
    }
    depth += a.shape().dim_size(1);
  }
  const DataType dtype = args[0].type();
  const Variable kernel = AddWeight(
      scope, WeightSpec{"kernel", TensorShape({depth, units}), dtype,
                        kernel_init.valid() ? kernel_init : initializers::GlorotUniform()});
  const Variable bias =
      AddWeight(scope, WeightSpec{"bias", TensorShape({units}), dtype, bias_init});
  TW_RETURN_IF_ERROR(scope.status());
  const Output x = args.size() == 1 ? args[0] : Output(ops::ConcatV2(scope, args, 1));
  return Output(ops::BiasAdd(scope, ops::MatMul(scope, x, kernel.value()), bias.value()));
}

absl::Status CheckState(const Scope& scope, const std::vector<Output>& state, size_t want) {
  if (state.size() != want) {
    return absl::InvalidArgumentError(absl::StrCat(scope.GetUniqueNameForOp("cell"),
                                                   ": the cell takes ", want,
                                                   " state tensors, got ", state.size()));
  }
  return absl::OkStatus();
}

// sequence_length as int32, checked as TF's dynamic_rnn does: a vector
// (statically), of the batch's length (an Assert at run time).
absl::StatusOr<Output> CheckedLengths(const Scope& s, const Output& lengths, const Output& batch,
                                      const std::string& name) {
  if (lengths.shape().dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": sequence_length must be a vector [batch], got shape ",
                     lengths.shape().DebugString()));
  }
  if (lengths.type() != DT_INT32 && lengths.type() != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": sequence_length must be int32 or int64, got ", DataTypeString(lengths.type())));
  }
  const Scope c = s.NewSubScope("sequence_length");
  const Output length = ops::Size(c, lengths);
  const ops::Assert check(
      c, ops::Equal(c, length, batch),
      {ops::Const(c,
                  std::string("sequence_length must have one entry per sequence of the batch: ")),
       length, ops::Const(c, std::string(" entries for a batch of ")), batch});
  return ops::Cast(c.WithControlDependencies({check.operation}), lengths, DT_INT32);
}

// TF's copy-through for the sequences that have ended by `time`: their
// output zeros and their state the old one (`old`).
void CopyFinishedThrough(const Scope& s, const Output& time, const Output& lengths,
                         const std::vector<Output>& old, RnnCell::StepResult* step) {
  // [batch, 1], broadcast against the [batch, size] outputs and states.
  const Output done = ops::ExpandDims(s, ops::GreaterEqual(s, time, lengths), 1);
  step->output = ops::SelectV2(s, done, ops::ZerosLike(s, step->output), step->output);
  for (size_t k = 0; k < old.size(); ++k) {
    step->state[k] = ops::SelectV2(s, done, old[k], step->state[k]);
  }
}

}  // namespace

absl::StatusOr<RnnCell::StepResult> LstmCell::Step(const Scope& scope, const Output& inputs,
                                                   const std::vector<Output>& state) const {
  TW_RETURN_IF_ERROR(CheckState(scope, state, 2));
  const Scope s =
      scope.WithVariableScope(options_.name, VariableReuse::kInherit).NewSubScope(options_.name);
  const Output c = state[0], h = state[1];
  TW_ASSIGN_OR_RETURN(Output gates, Linear(s, {inputs, h}, 4 * units_, options_.kernel_initializer,
                                           initializers::Zeros()));
  const ops::Split split(s, 1, gates, 4);
  const Output i = split.output[0], j = split.output[1], f = split.output[2], o = split.output[3];
  const Output forget_bias = ops::Cast(s, ops::Const(s, options_.forget_bias), inputs.type());
  const Output new_c = ops::AddV2(s, ops::Mul(s, c, ops::Sigmoid(s, ops::AddV2(s, f, forget_bias))),
                                  ops::Mul(s, ops::Sigmoid(s, i), ops::Tanh(s, j)));
  const Output new_h = ops::Mul(s, ops::Tanh(s, new_c), ops::Sigmoid(s, o));
  TW_RETURN_IF_ERROR(s.status());
  return StepResult{new_h, {new_c, new_h}};
}

absl::StatusOr<RnnCell::StepResult> GruCell::Step(const Scope& scope, const Output& inputs,
                                                  const std::vector<Output>& state) const {
  TW_RETURN_IF_ERROR(CheckState(scope, state, 1));
  const Scope s =
      scope.WithVariableScope(options_.name, VariableReuse::kInherit).NewSubScope(options_.name);
  const Output h = state[0];
  const Scope g = s.WithVariableScope("gates", VariableReuse::kInherit).NewSubScope("gates");
  TW_ASSIGN_OR_RETURN(
      Output gate_logits,
      Linear(g, {inputs, h}, 2 * units_, options_.kernel_initializer, initializers::Constant(1.0)));
  const ops::Split ru(g, 1, ops::Sigmoid(g, gate_logits), 2);
  const Output r = ru.output[0], u = ru.output[1];
  const Scope cs =
      s.WithVariableScope("candidate", VariableReuse::kInherit).NewSubScope("candidate");
  TW_ASSIGN_OR_RETURN(Output candidate_logits,
                      Linear(cs, {inputs, ops::Mul(cs, r, h)}, units_, options_.kernel_initializer,
                             initializers::Zeros()));
  const Output candidate = ops::Tanh(cs, candidate_logits);
  // u h + (1 - u) c
  const Output new_h = ops::AddV2(
      s, ops::Mul(s, u, h),
      ops::Mul(s, ops::Sub(s, ops::Cast(s, ops::Const(s, 1.0), u.type()), u), candidate));
  TW_RETURN_IF_ERROR(s.status());
  return StepResult{new_h, {new_h}};
}

absl::StatusOr<RnnResult> DynamicRnn(const Scope& scope, const RnnCell& cell, const Output& inputs,
                                     const DynamicRnnOptions& options) {
  TW_RETURN_IF_ERROR(scope.status());
  const Scope s =
      scope.WithVariableScope(options.name, VariableReuse::kInherit).NewSubScope(options.name);
  const PartialTensorShape& in_shape = inputs.shape();
  if (in_shape.unknown_rank() || in_shape.dims() != 3 || in_shape.dim_size(2) < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.name, ": DynamicRnn needs inputs of rank 3 with a known depth, got shape ",
        in_shape.DebugString()));
  }
  const Output time_major =
      options.time_major ? inputs : Output(ops::Transpose(s, inputs, {1, 0, 2}));
  const Output shape = ops::Shape(s, time_major);
  const Output steps =
      ops::StridedSlice(s, shape, {0}, {1}, {1}, ops::StridedSlice::ShrinkAxisMask(1));
  const Output batch =
      ops::StridedSlice(s, shape, {1}, {2}, {1}, ops::StridedSlice::ShrinkAxisMask(1));
  const DataType dtype = inputs.type();
  const int64_t static_batch = time_major.shape().dim_size(1);
  std::vector<Output> state = options.initial_state;
  const std::vector<int64_t> sizes = cell.StateSizes();
  if (state.empty()) {
    for (int64_t size : sizes) {
      state.push_back(ops::Fill(s, ops::Pack(s, {batch, ops::Const(s, static_cast<int32_t>(size))}),
                                ops::Cast(s, ops::Const(s, 0.0), dtype)));
      // The zeros' static shape, for the loop's shape invariants.
      s.graph()->SetOutputShape(state.back().node(), state.back().index(),
                                PartialTensorShape({static_batch, size}));
    }
  }
  if (state.size() != sizes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(options.name, ": the cell's state has ",
                                                   sizes.size(), " tensors, initial_state ",
                                                   state.size()));
  }
  Output lengths, loop_bound = steps;
  if (options.sequence_length.node() != nullptr) {
    TW_ASSIGN_OR_RETURN(lengths, CheckedLengths(s, options.sequence_length, batch, options.name));
    // min(steps, max(1, longest)): the steps some sequence still runs.
    loop_bound = ops::Minimum(
        s, steps, ops::Maximum(s, ops::Const(s, 1), ops::Max(s, lengths, ops::Const(s, 0))));
  }
  const ops::TensorArray in =
      ops::TensorArray(s.NewSubScope("input_ta"), dtype, steps).Unstack(s, time_major);
  const ops::TensorArray out(
      s.NewSubScope("output_ta"), dtype, loop_bound,
      {.element_shape = PartialTensorShape({static_batch, cell.OutputSize()})});
  std::vector<Output> vars = {ops::Const(s, 0), out.flow()};
  vars.insert(vars.end(), state.begin(), state.end());
  ops::WhileLoopOptions loop;
  loop.parallel_iterations = options.parallel_iterations;
  TW_ASSIGN_OR_RETURN(
      std::vector<Output> final_vars,
      ops::WhileLoop(
          s, vars,
          [loop_bound](const Scope& c, const std::vector<Output>& v) -> absl::StatusOr<Output> {
            return ops::Less(c, v[0], loop_bound);
          },
          [&](const Scope& b, const std::vector<Output>& v) -> absl::StatusOr<std::vector<Output>> {
            const std::vector<Output> old(v.begin() + 2, v.end());
            TW_ASSIGN_OR_RETURN(RnnCell::StepResult step, cell.Step(b, in.Read(b, v[0]), old));
            if (lengths.node() != nullptr) CopyFinishedThrough(b, v[0], lengths, old, &step);
            std::vector<Output> next = {ops::AddV2(b, v[0], 1),
                                        out.WithFlow(v[1]).Write(b, v[0], step.output).flow()};
            next.insert(next.end(), step.state.begin(), step.state.end());
            return next;
          },
          loop));
  Output outputs = out.WithFlow(final_vars[1]).Stack(s);
  if (lengths.node() != nullptr) {
    // Zeros for the steps after the longest sequence: [[0, steps - bound],
    // [0, 0], [0, 0]].
    const Output zero = ops::Const(s, 0);
    const Output none = ops::Pack(s, {zero, zero});
    outputs =
        ops::Pad(s, outputs,
                 ops::Pack(s, {ops::Pack(s, {zero, ops::Sub(s, steps, loop_bound)}), none, none}));
  }
  s.graph()->SetOutputShape(
      outputs.node(), outputs.index(),
      PartialTensorShape({time_major.shape().dim_size(0), static_batch, cell.OutputSize()}));
  if (!options.time_major) outputs = ops::Transpose(s, outputs, {1, 0, 2});
  TW_RETURN_IF_ERROR(s.status());
  return RnnResult{outputs, std::vector<Output>(final_vars.begin() + 2, final_vars.end())};
}

}  // namespace layers
}  // namespace towerflow
