// Build-time shape inference: the context a shape function runs in.
//
// Every registered op has a shape function (see op_registry.h). When a node is
// added to a Graph, the graph calls it with the node's attrs, the shapes of
// its inputs, and whatever is known of their values at build time (a Const's
// tensor; a shape-valued input such as Shape(x) as a partial shape), and
// stores the output shapes it sets. Unknown stays unknown: a shape function
// only fails for inputs that can never be valid, naming what is wrong.
//
//   absl::Status MatMulShape(InferenceContext* c) {
//     PartialTensorShape a, b;
//     TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &a));
//     ...
//     c->set_output(0, PartialTensorShape({m, n}));
//     return absl::OkStatus();
//   }
//
// Not thread-safe; one context per node being added.
#ifndef TOWERFLOW_GRAPH_SHAPE_INFERENCE_H_
#define TOWERFLOW_GRAPH_SHAPE_INFERENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/tensor_shape.h"
#include "core/types.h"
#include "framework/node_def_util.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"

namespace towerflow {

class InferenceContext {
 public:
  // What is known of one input at build time.
  struct InputInfo {
    PartialTensorShape shape;
    // The value, when the producer is a Const. Borrowed: must outlive the
    // context.
    const TensorProto* tensor = nullptr;
    // The value read as a shape, when the producer computes a shape
    // (Shape, or Pack/ConcatV2 of known pieces).
    std::optional<PartialTensorShape> tensor_as_shape;
    // For a resource handle of a variable (VarHandleOp): the variable's
    // shape and dtype (TensorFlow's handle data).
    std::optional<PartialTensorShape> handle_shape;
    DataType handle_dtype = DT_INVALID;
  };

  // `node_def` (attrs complete) and `op_def` are borrowed and must outlive
  // the context.
  InferenceContext(const NodeDef& node_def, const OpDef& op_def, int graph_def_version,
                   std::vector<InputInfo> inputs, DataTypeVector input_types,
                   DataTypeVector output_types, NameRangeMap input_ranges);

  const NodeDef& node_def() const { return node_def_; }
  // The graph's producer version (some legacy rules depend on it).
  int graph_def_version() const { return graph_def_version_; }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // REQUIRES: 0 <= i < num_inputs().
  const PartialTensorShape& input(int i) const { return inputs_[i].shape; }
  const TensorProto* input_tensor(int i) const { return inputs_[i].tensor; }
  DataType input_type(int i) const { return input_types_[i]; }
  // The variable shape behind resource input i, if known.
  const std::optional<PartialTensorShape>& input_handle_shape(int i) const {
    return inputs_[i].handle_shape;
  }
  DataType output_type(int i) const { return output_types_[i]; }

  // The [start, stop) input indices of the named argument. InvalidArgument
  // for a name the op does not have.
  absl::Status input_range(absl::string_view arg, int* start, int* stop) const;

  // REQUIRES: 0 <= i < num_outputs().
  void set_output(int i, PartialTensorShape shape) { outputs_[i] = std::move(shape); }
  const PartialTensorShape& output(int i) const { return outputs_[i]; }
  std::vector<PartialTensorShape> TakeOutputs() { return std::move(outputs_); }

  // Attr value of the node (defaults already filled in).
  template <typename T>
  absl::Status GetAttr(absl::string_view name, T* value) const {
    return GetNodeAttr(node_def_, name, value);
  }

  // The shape described by input i, a 1-D int32/int64 shape tensor: from its
  // constant value (-1 means unknown), from a shape-valued producer, or else
  // a shape of unknown dims with the tensor's length as rank (unknown rank if
  // that too is unknown). InvalidArgument for a non-vector or a value < -1.
  absl::StatusOr<PartialTensorShape> MakeShapeFromShapeTensor(int i) const;

  // The value of input i as a scalar integer, if it is a constant int32 or
  // int64 scalar; nullopt when not known at build time. InvalidArgument when
  // it is known but not a scalar integer.
  absl::StatusOr<std::optional<int64_t>> ConstantScalarInput(int i) const;
  // The values of input i when it is a constant integer tensor (any rank).
  absl::StatusOr<std::optional<std::vector<int64_t>>> ConstantIntInput(int i) const;

  // Shape algebra. Each returns InvalidArgument with the shapes in the message
  // when the constraint cannot hold; unknown rank satisfies every rank check.
  absl::Status WithRank(const PartialTensorShape& s, int rank, PartialTensorShape* out) const;
  absl::Status WithRankAtLeast(const PartialTensorShape& s, int rank,
                               PartialTensorShape* out) const;
  absl::Status WithRankAtMost(const PartialTensorShape& s, int rank, PartialTensorShape* out) const;
  absl::Status Merge(const PartialTensorShape& a, const PartialTensorShape& b,
                     PartialTensorShape* out) const;
  // Merges two dims (-1 unknown); InvalidArgument when both known and differ.
  absl::Status MergeDim(int64_t a, int64_t b, int64_t* out) const;

 private:
  const NodeDef& node_def_;
  const OpDef& op_def_;
  const int graph_def_version_;
  std::vector<InputInfo> inputs_;
  DataTypeVector input_types_;
  DataTypeVector output_types_;
  NameRangeMap input_ranges_;
  std::vector<PartialTensorShape> outputs_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_SHAPE_INFERENCE_H_
