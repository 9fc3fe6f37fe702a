// OpDefBuilder: turns a TensorFlow-style op spec into an OpDef.
//
// Grammar (TensorFlow's REGISTER_OP syntax):
//   Attr("name: TYPE [= DEFAULT]") where TYPE is one of
//     int | float | bool | string | type | shape | tensor | func | list(T)
//     {float, double}        a `type` limited to those types
//     {'SAME', 'VALID'}      a `string` limited to those values
//     numbertype | realnumbertype | quantizedtype
//     list({float, int32})   a `list(type)` limited to those types
//   optionally followed by ">= K" (an int's minimum, or a list's minimum
//   length); DEFAULT as in ParseAttrValue.
//   Input("name: T") / Output(...) where T is a fixed type (float), the name of
//   a `type` attr, the name of a `list(type)` attr, "N * T" (N an int attr), or
//   "Ref(T)" for a TF1 reference argument.
//
//   OpDefBuilder b("Conv2D");
//   b.Input("input: T").Attr("strides: list(int)").SetShapeFn(Conv2DShape);
//   absl::StatusOr<OpRegistrationData> data = b.Finalize();
//
// Not thread-safe; builders are used once, during registration.
#ifndef TOWERFLOW_GRAPH_OP_DEF_BUILDER_H_
#define TOWERFLOW_GRAPH_OP_DEF_BUILDER_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/op_def.pb.h"

namespace towerflow {

class InferenceContext;

// Computes a node's output shapes; see shape_inference.h.
using ShapeFn = std::function<absl::Status(InferenceContext* c)>;

// Everything the op registry (graph/op_registry.h) knows about one op: what
// OpDefBuilder::Finalize makes.
struct OpRegistrationData {
  OpDef op_def;
  ShapeFn shape_fn;
  // The registering file's stem ("array_ops"); groups the generated builders.
  std::string family;
  // Attrs added to the op after TensorFlow 1.x. Export omits them while they
  // hold their default, so the GraphDef also loads in TensorFlow 1.x.
  std::set<std::string> added_after_tf1;
};

class OpDefBuilder {
 public:
  // `file` is the registering source (__FILE__); its stem names the family.
  explicit OpDefBuilder(std::string op_name, std::string file = "");

  OpDefBuilder& Attr(std::string spec);
  // An attr TensorFlow added after 1.x; see OpRegistrationData.
  OpDefBuilder& AttrAddedAfterTF1(std::string spec);
  OpDefBuilder& Input(std::string spec);
  OpDefBuilder& Output(std::string spec);
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& SetIsCommutative();
  OpDefBuilder& SetIsAggregate();
  OpDefBuilder& SetAllowsUninitializedInput();
  OpDefBuilder& Deprecated(int version, std::string explanation);
  OpDefBuilder& Doc(std::string summary);
  OpDefBuilder& SetShapeFn(ShapeFn fn);

  const std::string& op_name() const { return op_name_; }

  // The OpDef and shape function. InvalidArgument naming the op and the bad
  // spec: a syntax error, an unknown type or attr, a default of the wrong
  // type, a duplicate name, or no shape function.
  absl::StatusOr<OpRegistrationData> Finalize() const;

 private:
  std::string op_name_;
  std::string family_;
  std::vector<std::string> attrs_;
  std::vector<std::string> late_attrs_;
  std::vector<std::string> inputs_;
  std::vector<std::string> outputs_;
  OpDef flags_;  // only the boolean fields, deprecation and summary
  ShapeFn shape_fn_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_OP_DEF_BUILDER_H_
