// OpBuilder: adds one op to a Scope from its inputs and attrs, the way the
// generated builders in ops/ (and hand-written composite ops) do it.
//
//   OpBuilder b(scope, "MatMul");
//   b.Input(a).Input(x).Attr("transpose_b", true);
//   Node* node = b.Finalize();          // nullptr on error (scope has it)
//
// Finalize names the node (Scope::GetUniqueNameForOp), infers type attrs
// (`T`, `N`, type lists) from the inputs unless they were set, turns literal
// inputs into Const nodes of the dtype their argument needs, and adds the node
// through Scope::AddNode (control dependencies, colocation, devices, checks,
// shapes). Errors name the op and argument and go to the scope's sticky
// status.
//
// One builder builds one node; not thread-safe.
#ifndef TOWERFLOW_GRAPH_OP_BUILDER_H_
#define TOWERFLOW_GRAPH_OP_BUILDER_H_

#include <map>
#include <string>
#include <vector>

#include "framework/attr_value_util.h"
#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {

class OpBuilder {
 public:
  OpBuilder(const Scope& scope, std::string op_type);

  // The next argument of the op's input_arg list: one tensor, or a list for
  // `N * T` and type-list arguments.
  OpBuilder& Input(const towerflow::Input& input);
  OpBuilder& Input(const InputList& inputs);

  template <typename T>
  OpBuilder& Attr(const std::string& name, const T& value) {
    SetAttrValue(value, &attrs_[name]);
    return *this;
  }
  OpBuilder& Attr(const std::string& name, const AttrValue& value) {
    attrs_[name] = value;
    return *this;
  }
  // Only for string literals, which would otherwise become bools.
  OpBuilder& Attr(const std::string& name, const char* value) {
    attrs_[name].set_s(value);
    return *this;
  }

  // See the file comment.
  Node* Finalize();

  // The outputs of argument `arg` of `node` (one for a plain argument, N for
  // a list). Empty when the node is null or has no such output.
  static OutputList Outputs(Node* node, const std::string& arg);

 private:
  struct Arg {
    bool is_list;
    std::vector<towerflow::Input> inputs;
  };

  absl::Status Build(Node** node);

  Scope scope_;
  std::string op_type_;
  std::vector<Arg> args_;
  std::map<std::string, AttrValue> attrs_;
};

// Adds a Const node holding `value` in `scope`, named "Const" (uniquified)
// unless the scope names it. Errors are returned and recorded in the scope.
// ops::Const and OpBuilder's literal inputs both make their nodes here.
absl::StatusOr<Node*> AddConstNode(const Scope& scope, const TensorProto& value);

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_OP_BUILDER_H_
