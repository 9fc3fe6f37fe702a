#include "graph/lower_functions.h"

#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "core/status_macros.h"
#include "framework/attr_value_util.h"
#include "framework/node_def_util.h"
#include "graph/function.h"

namespace towerflow {
namespace {

constexpr char kColocationPrefix[] = "loc:@";

enum class CallKind { kNone, kFunction, kPartitionedCall, kIf, kCase, kWhile };

// The call ops' kinds; kNone for any other op name.
CallKind CallKindOf(absl::string_view op) {
  if (op == "PartitionedCall" || op == "StatefulPartitionedCall") {
    return CallKind::kPartitionedCall;
  }
  if (op == "If" || op == "StatelessIf") return CallKind::kIf;
  if (op == "Case" || op == "StatelessCase") return CallKind::kCase;
  if (op == "While" || op == "StatelessWhile") return CallKind::kWhile;
  return CallKind::kNone;
}

CallKind Classify(const NodeDef& node, const FunctionLibrary& library) {
  const CallKind kind = CallKindOf(node.op());
  if (kind == CallKind::kNone && library.Find(node.op()) != nullptr) return CallKind::kFunction;
  return kind;
}

NodeDef MakeNode(const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs, const std::string& device) {
  NodeDef node;
  node.set_name(name);
  node.set_op(op);
  for (const std::string& input : inputs) node.add_input(input);
  node.set_device(device);
  return node;
}

template <typename T>
void SetAttr(NodeDef* node, const std::string& name, const T& value) {
  SetAttrValue(value, &(*node->mutable_attr())[name]);
}

std::string Control(absl::string_view node) { return absl::StrCat("^", node); }

// The node name of a tensor name ("n:1" -> "n").
std::string NodeOf(const std::string& tensor) {
  absl::StatusOr<TensorId> id = ParseTensorName(tensor);
  return id.ok() ? id->node : tensor;
}

template <typename T>
absl::StatusOr<T> Attr(const NodeDef& node, const std::string& name) {
  T value;
  TW_RETURN_IF_ERROR(GetNodeAttr(node, name, &value));
  return value;
}

class Lowerer {
 public:
  Lowerer(FunctionLibrary* library, std::set<std::string> names, GraphDef* out)
      : library_(library), names_(std::move(names)), out_(out) {}

  // Adds `node` to the output, lowered when it calls a function.
  // `stack`: the functions being inlined around it, outermost first.
  absl::Status Emit(NodeDef node, std::vector<std::string>* stack) {
    const std::string where = absl::StrCat("Node '", node.name(), "' (op ", node.op(), ")");
    const CallKind kind = Classify(node, *library_);
    if (kind != CallKind::kNone && kind != CallKind::kFunction) {
      AddDefaultsToNodeDef(library_->registry()->Find(node.op())->op_def, &node);
    }
    switch (kind) {
      case CallKind::kNone:
        *out_->add_node() = std::move(node);
        return absl::OkStatus();
      case CallKind::kFunction: {
        NameAttrList f;
        f.set_name(node.op());
        *f.mutable_attr() = node.attr();
        return AddErrorContext(LowerCall(node, f, false, stack), where);
      }
      case CallKind::kPartitionedCall: {
        absl::StatusOr<NameAttrList> f = Func(node, "f");
        if (!f.ok()) return AddErrorContext(f.status(), where);
        return AddErrorContext(LowerCall(node, *f, true, stack), where);
      }
      case CallKind::kIf:
        return AddErrorContext(LowerIf(node, stack), where);
      case CallKind::kCase:
        return AddErrorContext(LowerCase(node, stack), where);
      case CallKind::kWhile:
        return AddErrorContext(LowerWhile(node, stack), where);
    }
    return absl::InternalError("unreachable");
  }

 private:
  struct Inputs {
    std::vector<std::string> data;
    std::vector<std::string> control;
  };

  static absl::StatusOr<NameAttrList> Func(const NodeDef& node, const std::string& attr) {
    TW_ASSIGN_OR_RETURN(const NameAttrList* f, Attr<const NameAttrList*>(node, attr));
    return *f;
  }

  static Inputs SplitInputs(const NodeDef& node) {
    Inputs inputs;
    for (const std::string& input : node.input()) {
      (absl::StartsWith(input, "^") ? inputs.control : inputs.data).push_back(input);
    }
    return inputs;
  }

  // A prefix "name/" (or "name_1/"...) that no node name starts with yet.
  std::string UniquePrefix(const std::string& name) const {
    for (int k = 0;; ++k) {
      std::string prefix = k == 0 ? absl::StrCat(name, "/") : absl::StrCat(name, "_", k, "/");
      auto it = names_.lower_bound(prefix);
      if (it == names_.end() || !absl::StartsWith(*it, prefix)) return prefix;
    }
  }

  void Reserve(const std::string& name) { names_.insert(name); }

  // Emits a node the lowering adds, with T = `type` (and a Merge's N, its
  // number of data inputs).
  template <typename T>
  void Add(NodeDef node, const T& type) {
    SetAttr(&node, "T", type);
    if (node.op() == "Merge") {
      int64_t n = 0;
      for (const std::string& input : node.input()) n += absl::StartsWith(input, "^") ? 0 : 1;
      SetAttr(&node, "N", n);
    }
    *out_->add_node() = std::move(node);
  }

  // The body of the function a func attr of `node` names.
  absl::StatusOr<std::shared_ptr<const FunctionBody>> InstantiateAttr(
      const NodeDef& node, const std::string& attr, const std::vector<std::string>& stack) {
    TW_ASSIGN_OR_RETURN(NameAttrList f, Func(node, attr));
    return Instantiate(f, stack);
  }

  absl::StatusOr<std::shared_ptr<const FunctionBody>> Instantiate(
      const NameAttrList& f, const std::vector<std::string>& stack) {
    if (std::find(stack.begin(), stack.end(), f.name()) != stack.end()) {
      std::vector<std::string> cycle(std::find(stack.begin(), stack.end(), f.name()), stack.end());
      cycle.push_back(f.name());
      return absl::InvalidArgumentError(
          absl::StrCat("Function '", f.name(), "' is recursive: ", absl::StrJoin(cycle, " -> ")));
    }
    return library_->Instantiate(f.name(), f.attr());
  }

  static absl::Status CheckTypes(const char* what, const std::string& function,
                                 const DataTypeVector& declared, const DataTypeVector& actual) {
    if (declared == actual) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("the call's ", what, " are ", DataTypeSliceString(declared), " but function '",
                     function, "' has ", DataTypeSliceString(actual)));
  }

  // Emits `body` as a call named `name` with the given inputs: its nodes go
  // under a fresh prefix, and `name` becomes an IdentityN of the results
  // (after the control outputs), or a NoOp when there are none.
  absl::Status Inline(const std::string& name, const FunctionBody& body,
                      const std::vector<std::string>& data, const std::vector<std::string>& control,
                      const std::string& device, std::vector<std::string>* stack) {
    if (data.size() != body.arg_types.size()) {
      return absl::InvalidArgumentError(absl::StrCat("function '", body.name, "' takes ",
                                                     body.arg_types.size(), " arguments, given ",
                                                     data.size()));
    }
    const std::string prefix = UniquePrefix(name);
    std::vector<std::string> args;
    for (size_t i = 0; i < data.size(); ++i) args.push_back(absl::StrCat(prefix, "_arg", i));
    const bool has_input_control = !data.empty() || !control.empty();
    const std::string input_control = absl::StrCat(prefix, "_input_control");
    for (const std::string& a : args) Reserve(a);
    Reserve(input_control);
    absl::flat_hash_set<std::string> body_names;
    for (const NodeDef& n : body.nodes) {
      Reserve(prefix + n.name());
      body_names.insert(n.name());
    }

    const auto rename = [&](const std::string& ref) -> std::string {
      if (std::optional<int> i = ParseFunctionArgRef(ref)) return args[*i];
      return prefix + ref;
    };
    const auto rename_input = [&](const std::string& input) -> std::string {
      if (absl::StartsWith(input, "^")) return Control(NodeOf(rename(input.substr(1))));
      return rename(input);
    };

    for (size_t i = 0; i < data.size(); ++i) {
      NodeDef arg = MakeNode(args[i], "Identity", {data[i]}, device);
      for (const std::string& c : control) arg.add_input(c);
      Add(std::move(arg), body.arg_types[i]);
    }
    if (has_input_control) {
      NodeDef noop = MakeNode(input_control, "NoOp", control, device);
      for (const std::string& a : args) noop.add_input(Control(a));
      *out_->add_node() = std::move(noop);
    }
    stack->push_back(body.name);
    for (const NodeDef& n : body.nodes) {
      NodeDef node = n;
      node.set_name(prefix + n.name());
      node.clear_input();
      for (const std::string& input : n.input()) node.add_input(rename_input(input));
      if (node.input_size() == 0 && has_input_control) node.add_input(Control(input_control));
      if (node.device().empty()) node.set_device(device);
      // Colocation with a body node names its inlined copy.
      auto cls = node.mutable_attr()->find("_class");
      if (cls != node.mutable_attr()->end()) {
        for (std::string& s : *cls->second.mutable_list()->mutable_s()) {
          absl::string_view group = s;
          if (absl::ConsumePrefix(&group, kColocationPrefix) && body_names.contains(group)) {
            s = absl::StrCat(kColocationPrefix, prefix, group);
          }
        }
      }
      TW_RETURN_IF_ERROR(Emit(std::move(node), stack));
    }
    stack->pop_back();

    NodeDef result = MakeNode(name, body.rets.empty() ? "NoOp" : "IdentityN", {}, device);
    for (const std::string& ret : body.rets) result.add_input(rename(ret));
    for (const std::string& c : body.control_rets) result.add_input(Control(prefix + c));
    if (body.rets.empty() && body.control_rets.empty() && has_input_control) {
      result.add_input(Control(input_control));
    }
    if (body.rets.empty()) {
      *out_->add_node() = std::move(result);  // a NoOp
    } else {
      Add(std::move(result), body.ret_types);
    }
    return absl::OkStatus();
  }

  absl::Status LowerCall(const NodeDef& call, const NameAttrList& f, bool typed,
                         std::vector<std::string>* stack) {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> body, Instantiate(f, *stack));
    if (typed) {
      TW_ASSIGN_OR_RETURN(DataTypeVector tin, Attr<DataTypeVector>(call, "Tin"));
      TW_ASSIGN_OR_RETURN(DataTypeVector tout, Attr<DataTypeVector>(call, "Tout"));
      TW_RETURN_IF_ERROR(CheckTypes("argument types (Tin)", f.name(), tin, body->arg_types));
      TW_RETURN_IF_ERROR(CheckTypes("result types (Tout)", f.name(), tout, body->ret_types));
    }
    const Inputs inputs = SplitInputs(call);
    return Inline(call.name(), *body, inputs.data, inputs.control, call.device(), stack);
  }

  // A bool predicate from `tensor` of type `dtype`: itself, or ToBool of it.
  std::string ToBool(const std::string& prefix, const std::string& tensor, DataType dtype,
                     const std::vector<std::string>& control, const std::string& device) {
    if (dtype == DT_BOOL) return tensor;
    NodeDef node = MakeNode(prefix + "_to_bool", "ToBool", {tensor}, device);
    for (const std::string& c : control) node.add_input(c);
    Add(std::move(node), dtype);
    return prefix + "_to_bool";
  }

  absl::Status LowerIf(const NodeDef& node, std::vector<std::string>* stack) {
    TW_ASSIGN_OR_RETURN(DataType tcond, Attr<DataType>(node, "Tcond"));
    TW_ASSIGN_OR_RETURN(DataTypeVector tin, Attr<DataTypeVector>(node, "Tin"));
    TW_ASSIGN_OR_RETURN(DataTypeVector tout, Attr<DataTypeVector>(node, "Tout"));
    TW_ASSIGN_OR_RETURN(auto then_body, InstantiateAttr(node, "then_branch", *stack));
    TW_ASSIGN_OR_RETURN(auto else_body, InstantiateAttr(node, "else_branch", *stack));
    for (const auto* body : {then_body.get(), else_body.get()}) {
      TW_RETURN_IF_ERROR(CheckTypes("argument types (Tin)", body->name, tin, body->arg_types));
      TW_RETURN_IF_ERROR(CheckTypes("result types (Tout)", body->name, tout, body->ret_types));
    }
    const Inputs inputs = SplitInputs(node);
    if (inputs.data.size() != tin.size() + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected ", tin.size() + 1, " inputs (cond and Tin), got ", inputs.data.size()));
    }
    const std::string& device = node.device();
    const std::string prefix = UniquePrefix(node.name());
    const std::string pred = ToBool(prefix, inputs.data[0], tcond, inputs.control, device);

    NodeDef switch_pred = MakeNode(prefix + "_switch_pred", "Switch", {pred, pred}, device);
    for (const std::string& c : inputs.control) switch_pred.add_input(c);
    Add(std::move(switch_pred), DT_BOOL);
    const std::string pivot_t = prefix + "_pivot_t";
    const std::string pivot_f = prefix + "_pivot_f";
    for (const auto& [pivot, side] : {std::pair{pivot_t, ":1"}, std::pair{pivot_f, ":0"}}) {
      NodeDef identity =
          MakeNode(pivot, "Identity", {absl::StrCat(prefix, "_switch_pred", side)}, device);
      Add(std::move(identity), DT_BOOL);
    }
    std::vector<std::string> then_args;
    std::vector<std::string> else_args;
    for (size_t i = 0; i < tin.size(); ++i) {
      const std::string name = absl::StrCat(prefix, "_switch", i);
      NodeDef s = MakeNode(name, "Switch", {inputs.data[i + 1], pred}, device);
      for (const std::string& c : inputs.control) s.add_input(c);
      Add(std::move(s), tin[i]);
      then_args.push_back(name + ":1");
      else_args.push_back(name);
    }
    const std::string then_call = prefix + "then";
    const std::string else_call = prefix + "else";
    Reserve(then_call);
    Reserve(else_call);
    TW_RETURN_IF_ERROR(Inline(then_call, *then_body, then_args, {Control(pivot_t)}, device, stack));
    TW_RETURN_IF_ERROR(Inline(else_call, *else_body, else_args, {Control(pivot_f)}, device, stack));

    NodeDef result = MakeNode(node.name(), tout.empty() ? "NoOp" : "IdentityN", {}, device);
    for (size_t i = 0; i < tout.size(); ++i) {
      const std::string name = absl::StrCat(prefix, "_merge", i);
      NodeDef merge = MakeNode(name, "Merge",
                               {TensorIdString(then_call, static_cast<int>(i)),
                                TensorIdString(else_call, static_cast<int>(i))},
                               device);
      Add(std::move(merge), tout[i]);
      result.add_input(name);
    }
    const std::string executed = prefix + "_branch_executed";
    NodeDef branch_executed = MakeNode(
        executed, "Merge", {pivot_t, pivot_f, Control(then_call), Control(else_call)}, device);
    Add(std::move(branch_executed), DT_BOOL);
    result.add_input(Control(executed));
    if (tout.empty()) {
      *out_->add_node() = std::move(result);  // a NoOp
    } else {
      Add(std::move(result), tout);
    }
    return absl::OkStatus();
  }

  // Case(branch_index, input...) as If with one predicate per branch:
  // k = branch_index, or the last branch when it is out of range, and
  // branch i runs on the live side of Switch(input, k == i). Merges take
  // the one live branch's outputs.
  absl::Status LowerCase(const NodeDef& node, std::vector<std::string>* stack) {
    TW_ASSIGN_OR_RETURN(DataTypeVector tin, Attr<DataTypeVector>(node, "Tin"));
    TW_ASSIGN_OR_RETURN(DataTypeVector tout, Attr<DataTypeVector>(node, "Tout"));
    auto attr = node.attr().find("branches");
    if (attr == node.attr().end() || attr->second.list().func_size() == 0) {
      return absl::InvalidArgumentError("Case needs a non-empty list(func) attr 'branches'");
    }
    std::vector<std::shared_ptr<const FunctionBody>> bodies;
    for (const NameAttrList& f : attr->second.list().func()) {
      TW_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> body, Instantiate(f, *stack));
      TW_RETURN_IF_ERROR(CheckTypes("argument types (Tin)", body->name, tin, body->arg_types));
      TW_RETURN_IF_ERROR(CheckTypes("result types (Tout)", body->name, tout, body->ret_types));
      bodies.push_back(std::move(body));
    }
    const Inputs inputs = SplitInputs(node);
    if (inputs.data.size() != tin.size() + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected ", tin.size() + 1, " inputs (branch_index and Tin), got ", inputs.data.size()));
    }
    const std::string& device = node.device();
    const std::string prefix = UniquePrefix(node.name());
    const int n = static_cast<int>(bodies.size());
    // The index through an Identity, which also orders the constants below
    // in the index's frame (a control edge on the index's own node would
    // run a fed placeholder).
    const std::string index = prefix + "_branch_index";
    NodeDef index_node = MakeNode(index, "Identity", {inputs.data[0]}, device);
    for (const std::string& ctl : inputs.control) index_node.add_input(ctl);
    Add(std::move(index_node), DT_INT32);
    const auto constant = [&](const std::string& name, int value) {
      NodeDef c = MakeNode(prefix + name, "Const", {Control(index)}, device);
      TensorProto proto;
      proto.set_dtype(DT_INT32);
      proto.mutable_tensor_shape();
      proto.add_int_val(value);
      SetAttr(&c, "dtype", DT_INT32);
      SetAttr(&c, "value", proto);
      *out_->add_node() = std::move(c);
      return prefix + name;
    };
    const auto binary = [&](const std::string& name, const std::string& op, const std::string& a,
                            const std::string& b, DataType type) {
      NodeDef def = MakeNode(prefix + name, op, {a, b}, device);
      if (type == DT_INVALID) {
        *out_->add_node() = std::move(def);  // LogicalAnd: no T
      } else {
        Add(std::move(def), type);
      }
      return prefix + name;
    };
    const std::string in_range =
        binary("_in_range", "LogicalAnd",
               binary("_ge_0", "GreaterEqual", index, constant("_zero", 0), DT_INT32),
               binary("_lt_n", "Less", index, constant("_n", n), DT_INT32), DT_INVALID);
    NodeDef select = MakeNode(prefix + "_index", "SelectV2",
                              {in_range, index, constant("_last", n - 1)}, device);
    Add(std::move(select), DT_INT32);

    std::vector<std::string> calls, pivots;
    for (int b = 0; b < n; ++b) {
      const std::string pred = binary(absl::StrCat("_is", b), "Equal", prefix + "_index",
                                      constant(absl::StrCat("_branch", b), b), DT_INT32);
      const std::string switch_pred = absl::StrCat(prefix, "_switch_pred", b);
      Add(MakeNode(switch_pred, "Switch", {pred, pred}, device), DT_BOOL);
      pivots.push_back(absl::StrCat(prefix, "_pivot", b));
      Add(MakeNode(pivots.back(), "Identity", {switch_pred + ":1"}, device), DT_BOOL);
      std::vector<std::string> args;
      for (size_t i = 0; i < tin.size(); ++i) {
        const std::string name = absl::StrCat(prefix, "_switch", b, "_", i);
        Add(MakeNode(name, "Switch", {inputs.data[i + 1], pred}, device), tin[i]);
        args.push_back(name + ":1");
      }
      calls.push_back(absl::StrCat(prefix, "branch", b));
      Reserve(calls.back());
      TW_RETURN_IF_ERROR(
          Inline(calls.back(), *bodies[b], args, {Control(pivots.back())}, device, stack));
    }
    NodeDef result = MakeNode(node.name(), tout.empty() ? "NoOp" : "IdentityN", {}, device);
    for (size_t i = 0; i < tout.size(); ++i) {
      const std::string name = absl::StrCat(prefix, "_merge", i);
      NodeDef merge = MakeNode(name, "Merge", {}, device);
      for (const std::string& call : calls) {
        merge.add_input(TensorIdString(call, static_cast<int>(i)));
      }
      Add(std::move(merge), tout[i]);
      result.add_input(name);
    }
    const std::string executed = prefix + "_branch_executed";
    NodeDef branch_executed = MakeNode(executed, "Merge", pivots, device);
    for (const std::string& call : calls) branch_executed.add_input(Control(call));
    Add(std::move(branch_executed), DT_BOOL);
    result.add_input(Control(executed));
    if (tout.empty()) {
      *out_->add_node() = std::move(result);  // a NoOp
    } else {
      Add(std::move(result), tout);
    }
    return absl::OkStatus();
  }

  absl::Status LowerWhile(const NodeDef& node, std::vector<std::string>* stack) {
    TW_ASSIGN_OR_RETURN(DataTypeVector types, Attr<DataTypeVector>(node, "T"));
    TW_ASSIGN_OR_RETURN(int64_t parallel_iterations, Attr<int64_t>(node, "parallel_iterations"));
    TW_ASSIGN_OR_RETURN(auto cond, InstantiateAttr(node, "cond", *stack));
    TW_ASSIGN_OR_RETURN(auto body, InstantiateAttr(node, "body", *stack));
    TW_RETURN_IF_ERROR(CheckTypes("loop variable types (T)", cond->name, types, cond->arg_types));
    TW_RETURN_IF_ERROR(CheckTypes("loop variable types (T)", body->name, types, body->arg_types));
    TW_RETURN_IF_ERROR(CheckTypes("loop variable types (T)", body->name, types, body->ret_types));
    if (cond->ret_types.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cond function '", cond->name, "' must return one value, not ", cond->ret_types.size()));
    }
    if (types.empty()) return absl::InvalidArgumentError("a While needs a loop variable");
    if (parallel_iterations < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("parallel_iterations must be positive, not ", parallel_iterations));
    }
    const Inputs inputs = SplitInputs(node);
    if (inputs.data.size() != types.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected ", types.size(), " inputs (T), got ", inputs.data.size()));
    }
    const std::string& device = node.device();
    const std::string prefix = UniquePrefix(node.name());
    const auto name = [&](const char* what, size_t i) { return absl::StrCat(prefix, what, i); };
    const std::string cond_call = prefix + "cond";
    const std::string body_call = prefix + "body";
    Reserve(cond_call);
    Reserve(body_call);

    std::vector<std::string> merges;
    for (size_t i = 0; i < types.size(); ++i) {
      NodeDef enter = MakeNode(name("_enter", i), "Enter", {inputs.data[i]}, device);
      for (const std::string& c : inputs.control) enter.add_input(c);
      SetAttr(&enter, "frame_name", node.name());
      SetAttr(&enter, "is_constant", false);
      SetAttr(&enter, "parallel_iterations", parallel_iterations);
      Add(std::move(enter), types[i]);
      NodeDef merge = MakeNode(name("_merge", i), "Merge",
                               {name("_enter", i), name("_next_iteration", i)}, device);
      Add(std::move(merge), types[i]);
      merges.push_back(name("_merge", i));
    }
    TW_RETURN_IF_ERROR(Inline(cond_call, *cond, merges, {}, device, stack));
    const std::string pred = ToBool(prefix, cond_call, cond->ret_types[0], {}, device);
    NodeDef loop_cond = MakeNode(prefix + "_loop_cond", "LoopCond", {pred}, device);
    *out_->add_node() = std::move(loop_cond);

    std::vector<std::string> body_args;
    NodeDef result = MakeNode(node.name(), "IdentityN", {}, device);
    for (size_t i = 0; i < types.size(); ++i) {
      NodeDef s =
          MakeNode(name("_switch", i), "Switch", {merges[i], prefix + "_loop_cond"}, device);
      Add(std::move(s), types[i]);
      NodeDef exit = MakeNode(name("_exit", i), "Exit", {name("_switch", i)}, device);
      Add(std::move(exit), types[i]);
      NodeDef identity =
          MakeNode(name("_identity", i), "Identity", {name("_switch", i) + ":1"}, device);
      Add(std::move(identity), types[i]);
      body_args.push_back(name("_identity", i));
      result.add_input(name("_exit", i));
    }
    TW_RETURN_IF_ERROR(Inline(body_call, *body, body_args, {}, device, stack));
    for (size_t i = 0; i < types.size(); ++i) {
      NodeDef next = MakeNode(name("_next_iteration", i), "NextIteration",
                              {TensorIdString(body_call, static_cast<int>(i))}, device);
      Add(std::move(next), types[i]);
    }
    Add(std::move(result), types);
    return absl::OkStatus();
  }

  FunctionLibrary* const library_;
  std::set<std::string> names_;
  GraphDef* const out_;
};

}  // namespace

bool IsCallOp(absl::string_view op) { return CallKindOf(op) != CallKind::kNone; }

bool HasFunctionCalls(const GraphDef& graph_def, const Graph& graph) {
  absl::flat_hash_set<std::string> functions;
  for (const FunctionDefLibrary* lib : {&graph.library(), &graph_def.library()}) {
    for (const FunctionDef& f : lib->function()) functions.insert(f.signature().name());
  }
  for (const NodeDef& node : graph_def.node()) {
    if (IsCallOp(node.op()) || functions.contains(node.op())) return true;
  }
  return false;
}

absl::Status LowerFunctionCalls(const Graph& graph, GraphDef* graph_def) {
  FunctionLibrary library(graph.op_registry());
  TW_RETURN_IF_ERROR(library.Add(graph.library()));
  TW_RETURN_IF_ERROR(library.Add(graph_def->library()));
  std::set<std::string> names;
  for (const Node* n : graph.nodes()) names.insert(n->name());
  for (const NodeDef& n : graph_def->node()) names.insert(n.name());

  GraphDef out = *graph_def;
  out.clear_node();
  Lowerer lowerer(&library, std::move(names), &out);
  std::vector<std::string> stack;
  for (const NodeDef& node : graph_def->node()) TW_RETURN_IF_ERROR(lowerer.Emit(node, &stack));
  *graph_def = std::move(out);
  return absl::OkStatus();
}

}  // namespace towerflow
