#include "graph/op_builder.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"

namespace towerflow {

OpBuilder::OpBuilder(const Scope& scope, std::string op_type)
    : scope_(scope), op_type_(std::move(op_type)) {}

OpBuilder& OpBuilder::Input(const towerflow::Input& input) {
  args_.push_back({false, {input}});
  return *this;
}

OpBuilder& OpBuilder::Input(const InputList& inputs) {
  args_.push_back({true, inputs.inputs()});
  return *this;
}

Node* OpBuilder::Finalize() {
  if (!scope_.ok()) return nullptr;
  Node* node = nullptr;
  const absl::Status status = Build(&node);
  if (!status.ok()) {
    scope_.UpdateStatus(status);
    return nullptr;
  }
  return node;
}

namespace {

// The dtype an Input carries as given (an Output's, or the literal's own).
DataType GivenType(const Input& in) {
  return in.is_output() ? in.output().type() : in.initializer().tensor().dtype();
}

}  // namespace

absl::Status OpBuilder::Build(Node** node) {
  Graph* graph = scope_.graph();
  TW_ASSIGN_OR_RETURN(const OpRegistrationData* reg, graph->LookUpOp(op_type_));
  const OpDef& op_def = reg->op_def;
  const std::string where = absl::StrCat("Building op ", op_type_);
  if (static_cast<int>(args_.size()) != op_def.input_arg_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": the op takes ", op_def.input_arg_size(), " inputs, got ", args_.size()));
  }
  // Check the inputs and infer unset attrs from the Outputs among them.
  for (int a = 0; a < op_def.input_arg_size(); ++a) {
    const OpDef::ArgDef& arg_def = op_def.input_arg(a);
    const Arg& arg = args_[a];
    const std::string arg_where = absl::StrCat(where, ", input '", arg_def.name(), "'");
    const bool wants_list = !arg_def.number_attr().empty() || !arg_def.type_list_attr().empty();
    if (wants_list != arg.is_list) {
      return absl::InvalidArgumentError(absl::StrCat(
          arg_where, wants_list ? ": expects a list of tensors" : ": expects one tensor"));
    }
    for (const towerflow::Input& in : arg.inputs) {
      if (in.is_output()) {
        const Output& out = in.output();
        if (!out.valid() || graph->FindNode(out.node()->name()) != out.node()) {
          return absl::InvalidArgumentError(
              absl::StrCat(arg_where,
                           ": the Output is invalid or from another graph (was it "
                           "built in a scope that had failed?)"));
        }
      } else if (!in.initializer().status().ok()) {
        return AddErrorContext(in.initializer().status(), arg_where);
      }
    }
    if (!arg_def.number_attr().empty() && attrs_.count(arg_def.number_attr()) == 0) {
      SetAttrValue(static_cast<int64_t>(arg.inputs.size()), &attrs_[arg_def.number_attr()]);
    }
    if (!arg_def.type_attr().empty() && attrs_.count(arg_def.type_attr()) == 0) {
      for (const towerflow::Input& in : arg.inputs) {
        if (in.is_output()) {
          SetAttrValue(BaseType(in.output().type()), &attrs_[arg_def.type_attr()]);
          break;
        }
      }
    }
  }
  // Literal-only arguments: the first literal decides.
  for (int a = 0; a < op_def.input_arg_size(); ++a) {
    const OpDef::ArgDef& arg_def = op_def.input_arg(a);
    if (!arg_def.type_attr().empty() && attrs_.count(arg_def.type_attr()) == 0 &&
        !args_[a].inputs.empty()) {
      SetAttrValue(GivenType(args_[a].inputs[0]), &attrs_[arg_def.type_attr()]);
    }
    if (!arg_def.type_list_attr().empty() && attrs_.count(arg_def.type_list_attr()) == 0) {
      DataTypeVector types;
      for (const towerflow::Input& in : args_[a].inputs) types.push_back(BaseType(GivenType(in)));
      SetAttrValue(types, &attrs_[arg_def.type_list_attr()]);
    }
  }

  NodeDef def;
  def.set_op(op_type_);
  for (auto& [name, value] : attrs_) (*def.mutable_attr())[name] = value;
  // The dtype each input must have, from the attrs as now known.
  NodeDef typed = def;
  AddDefaultsToNodeDef(op_def, &typed);
  DataTypeVector in_types, out_types;
  TW_RETURN_IF_ERROR(
      AddErrorContext(InOutTypesForNode(typed, op_def, &in_types, &out_types), where));

  // Literals become Consts; they share the op's namespace, not its op name.
  const Scope const_scope = scope_.NewSubScope("");
  int index = 0;
  std::vector<std::string> inputs;
  for (int a = 0; a < op_def.input_arg_size(); ++a) {
    for (const towerflow::Input& in : args_[a].inputs) {
      if (index >= static_cast<int>(in_types.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": more inputs than the op's attrs allow"));
      }
      const DataType want = BaseType(in_types[index++]);
      if (in.is_output()) {
        inputs.push_back(TensorIdString(in.output().node()->name(), in.output().index()));
        continue;
      }
      absl::StatusOr<TensorProto> value = ConvertTensorProto(in.initializer().tensor(), want);
      if (!value.ok()) {
        return AddErrorContext(
            value.status(),
            absl::StrCat(where, ", input '", op_def.input_arg(a).name(), "' (a literal where ",
                         DataTypeString(want), " is expected)"));
      }
      TW_ASSIGN_OR_RETURN(Node * const_node, AddConstNode(const_scope, *value));
      inputs.push_back(const_node->name());
    }
  }
  def.set_name(scope_.GetUniqueNameForOp(op_type_));
  if (!scope_.ok()) return scope_.status();
  for (const std::string& in : inputs) def.add_input(in);
  TW_ASSIGN_OR_RETURN(*node, scope_.AddNode(std::move(def)));
  return absl::OkStatus();
}

absl::StatusOr<Node*> AddConstNode(const Scope& scope, const TensorProto& value) {
  NodeDef def;
  def.set_name(scope.GetUniqueNameForOp("Const"));
  def.set_op("Const");
  SetAttrValue(value.dtype(), &(*def.mutable_attr())["dtype"]);
  SetAttrValue(value, &(*def.mutable_attr())["value"]);
  return scope.AddNode(std::move(def));
}

OutputList OpBuilder::Outputs(Node* node, const std::string& arg) {
  OutputList outputs;
  if (node == nullptr) return outputs;
  NameRangeMap ranges;
  if (!NameRangesForNode(node->def(), node->op_def(), nullptr, &ranges).ok()) return outputs;
  auto it = ranges.find(arg);
  if (it == ranges.end()) return outputs;
  for (int i = it->second.first; i < it->second.second; ++i) outputs.emplace_back(node, i);
  return outputs;
}

}  // namespace towerflow
