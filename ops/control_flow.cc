#include "ops/control_flow.h"

#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"

namespace towerflow {
namespace ops {
namespace {

// The nodes a branch or loop function added: ids in [first, end). Nodes from
// `inside_from` on (a loop's own Enters, Merges...) are not captured.
struct Region {
  int first;
  int end;
  int inside_from;
};

Region RegionSince(const Graph& g, int first, int inside_from) {
  return {first, g.num_node_ids(), inside_from};
}

// Variables the region created, with their initializers and initial values:
// they stay outside the branch or loop (they are made once, not per branch or
// iteration); their reads are captured like any outside tensor.
absl::flat_hash_set<const Node*> VariableNodes(const Graph& g, Region r) {
  absl::flat_hash_set<const Node*> out;
  std::vector<const Node*> stack;
  for (int id = r.first; id < r.end; ++id) {
    const Node* n = g.FindNodeId(id);
    if (n == nullptr) continue;
    if (const VariableRecord* rec = g.variable_store().FindByHandle(n)) {
      stack.push_back(n);
      if (rec->initializer != nullptr) stack.push_back(rec->initializer);
    }
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->id() < r.first || !out.insert(n).second) continue;
    for (const Edge* e : n->in_edges()) stack.push_back(e->src());
  }
  return out;
}

// How a tensor from outside enters the region; `as_ref` when the consumer
// takes a Ref(T).
using CaptureFn = std::function<absl::StatusOr<Output>(const Output& outside, bool as_ref)>;

// Rewires the region's inputs from outside through `capture` (one capture
// per tensor), moves control edges from outside onto `control_sink` when
// there is one (a loop: a frame takes values only through Enter), and gives
// every node without an input from inside a control input from `pivot`.
// Returns `outputs` with those not made inside captured too.
absl::StatusOr<std::vector<Output>> CaptureRegion(Graph* g, Region r,
                                                  const std::vector<Output>& outputs,
                                                  const CaptureFn& capture, Node* pivot,
                                                  Node* control_sink) {
  const absl::flat_hash_set<const Node*> variables = VariableNodes(*g, r);
  const auto inside = [&](const Node* n) {
    return n->id() >= r.inside_from && !variables.contains(n);
  };
  std::map<std::tuple<const Node*, int, bool>, Output> captured;
  for (int id = r.first; id < r.end; ++id) {
    Node* n = g->FindNodeId(id);
    if (n == nullptr || variables.contains(n)) continue;
    const std::vector<const Edge*> in_edges = n->in_edges();  // edited below
    for (const Edge* e : in_edges) {
      Node* src = e->src();
      if (inside(src)) continue;
      if (e->IsControlEdge()) {
        if (control_sink != nullptr) {
          g->RemoveEdge(e);
          g->AddControlEdge(src, control_sink);
        }
        continue;
      }
      const int dst_input = e->dst_input();
      const bool as_ref = IsRefType(n->input_type(dst_input));
      auto key = std::make_tuple(src, e->src_output(), as_ref);
      auto it = captured.find(key);
      if (it == captured.end()) {
        TW_ASSIGN_OR_RETURN(Output c, capture(Output(src, e->src_output()), as_ref));
        it = captured.emplace(key, c).first;
      }
      g->RemoveEdge(e);
      TW_RETURN_IF_ERROR(
          g->AddDataEdge(it->second.node(), it->second.index(), n, dst_input).status());
    }
    bool has_inside_input = false;
    for (const Edge* e : n->in_edges()) has_inside_input |= inside(e->src());
    if (!has_inside_input) g->AddControlEdge(pivot, n);
  }
  std::vector<Output> out;
  for (const Output& o : outputs) {
    if (o.node() == nullptr) return absl::InvalidArgumentError("an output is not set");
    if (inside(o.node())) {
      out.push_back(o);
    } else {
      TW_ASSIGN_OR_RETURN(Output c, capture(o, false));
      out.push_back(c);
    }
  }
  return out;
}

std::string Dtypes(const std::vector<Output>& v) {
  std::string s;
  for (const Output& o : v) {
    absl::StrAppend(&s, s.empty() ? "" : ", ", DataTypeString(BaseType(o.type())));
  }
  return absl::StrCat("[", s, "]");
}

// TF's _ShapeLessThanOrEqual: `shape` is `invariant` or more specific.
bool ShapeWithin(const PartialTensorShape& shape, const PartialTensorShape& invariant) {
  if (invariant.unknown_rank()) return true;
  if (shape.unknown_rank() || shape.dims() != invariant.dims()) return false;
  for (int d = 0; d < shape.dims(); ++d) {
    if (invariant.dim_size(d) >= 0 && invariant.dim_size(d) != shape.dim_size(d)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<Output>> Cond(const Scope& scope, const Output& pred,
                                         const BranchFn& then_fn, const BranchFn& else_fn) {
  TW_RETURN_IF_ERROR(scope.status());
  if (BaseType(pred.type()) != DT_BOOL) {
    return absl::InvalidArgumentError(absl::StrCat("Cond's pred '", pred.name(), "' is a ",
                                                   DataTypeString(pred.type()), ", not a bool"));
  }
  Graph* g = scope.graph();
  const Scope s = scope.NewSubScope("cond");
  const Output pred_id = Identity(s.WithOpName("pred_id"), pred);
  const Switch pivots(s, pred_id, pred_id);
  const Output pivot_f = Identity(s.WithOpName("switch_f"), pivots.output_false);
  const Output pivot_t = Identity(s.WithOpName("switch_t"), pivots.output_true);
  TW_RETURN_IF_ERROR(s.status());
  const auto branch = [&](const BranchFn& fn, bool taken_when,
                          const Output& pivot) -> absl::StatusOr<std::vector<Output>> {
    const CaptureFn capture = [&](const Output& x, bool as_ref) -> absl::StatusOr<Output> {
      Output out;
      if (as_ref) {
        const RefSwitch sw(s, x, pred_id);
        out = taken_when ? sw.output_true : sw.output_false;
      } else {
        const Switch sw(s, x, pred_id);
        out = taken_when ? sw.output_true : sw.output_false;
      }
      TW_RETURN_IF_ERROR(s.status());
      return out;
    };
    const int first = g->num_node_ids();
    TW_ASSIGN_OR_RETURN(std::vector<Output> outputs, fn(s));
    TW_RETURN_IF_ERROR(s.status());
    const Region region = RegionSince(*g, first, first);
    return CaptureRegion(g, region, outputs, capture, pivot.node(), nullptr);
  };
  TW_ASSIGN_OR_RETURN(std::vector<Output> then_out, branch(then_fn, true, pivot_t));
  TW_ASSIGN_OR_RETURN(std::vector<Output> else_out, branch(else_fn, false, pivot_f));
  if (Dtypes(then_out) != Dtypes(else_out)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Cond's branches must return the same number and dtypes of tensors: the true "
                     "branch returns ",
                     Dtypes(then_out), ", the false branch ", Dtypes(else_out)));
  }
  std::vector<Output> merged;
  for (size_t i = 0; i < then_out.size(); ++i) {
    merged.push_back(Merge(s.WithOpName("Merge"), {else_out[i], then_out[i]}).output);
  }
  TW_RETURN_IF_ERROR(s.status());
  return merged;
}

absl::StatusOr<std::vector<Output>> WhileLoop(const Scope& scope,
                                              const std::vector<Output>& loop_vars,
                                              const LoopCondFn& cond, const LoopBodyFn& body,
                                              const WhileLoopOptions& options) {
  TW_RETURN_IF_ERROR(scope.status());
  if (loop_vars.empty()) return absl::InvalidArgumentError("WhileLoop needs a loop variable");
  if (!options.shape_invariants.empty() && options.shape_invariants.size() != loop_vars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("WhileLoop has ", loop_vars.size(), " loop variables but ",
                     options.shape_invariants.size(), " shape invariants"));
  }
  if (options.parallel_iterations < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "WhileLoop's parallel_iterations must be positive, not ", options.parallel_iterations));
  }
  Graph* g = scope.graph();
  const Scope s = scope.NewSubScope(options.name);
  const std::string frame = s.GetUniqueNameForOp("while_context");
  const int loop_first = g->num_node_ids();
  const auto enter_attrs = Enter::ParallelIterations(options.parallel_iterations);
  std::vector<Output> enters, merges;
  std::vector<PartialTensorShape> invariants;
  for (size_t i = 0; i < loop_vars.size(); ++i) {
    const Output& v = loop_vars[i];
    enters.push_back(Enter(s.WithOpName("Enter"), v, frame, enter_attrs));
    merges.push_back(Merge(s.WithOpName("Merge"), {enters.back(), enters.back()}).output);
    TW_RETURN_IF_ERROR(s.status());
    const PartialTensorShape& entry = v.node()->output_shape(v.index());
    PartialTensorShape invariant = entry;
    if (!options.shape_invariants.empty()) {
      invariant = options.shape_invariants[i];
      if (!ShapeWithin(entry, invariant)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "The shape invariant specified for '", v.name(),
            "' is not compatible with the initial shape of the loop variable. It enters the "
            "loop with shape ",
            entry.DebugString(), ", but the specified shape invariant is ",
            invariant.DebugString()));
      }
    }
    g->SetOutputShape(merges.back().node(), 0, invariant);
    invariants.push_back(std::move(invariant));
  }
  const CaptureFn capture = [&](const Output& x, bool as_ref) -> absl::StatusOr<Output> {
    const int p = options.parallel_iterations;
    Output out = as_ref ? Output(RefEnter(s.WithOpName("Enter"), x, frame,
                                          RefEnter::IsConstant(true).ParallelIterations(p))
                                     .output)
                        : Output(Enter(s.WithOpName("Enter"), x, frame,
                                       Enter::IsConstant(true).ParallelIterations(p))
                                     .output);
    TW_RETURN_IF_ERROR(s.status());
    return out;
  };

  int mark = g->num_node_ids();
  TW_ASSIGN_OR_RETURN(Output pred, cond(s, merges));
  TW_RETURN_IF_ERROR(s.status());
  Region region = RegionSince(*g, mark, loop_first);
  TW_ASSIGN_OR_RETURN(std::vector<Output> preds, CaptureRegion(g, region, {pred}, capture,
                                                               merges[0].node(), enters[0].node()));
  if (BaseType(pred.type()) != DT_BOOL) {
    return absl::InvalidArgumentError(
        absl::StrCat("WhileLoop's cond must return a bool, not ", DataTypeString(pred.type())));
  }
  const Output loop_cond = LoopCond(s, preds[0]);
  std::vector<Output> exits, vars;
  for (const Output& m : merges) {
    const Switch sw(s, m, loop_cond);
    exits.push_back(Exit(s, sw.output_false));
    vars.push_back(Identity(s, sw.output_true));
  }
  TW_RETURN_IF_ERROR(s.status());

  mark = g->num_node_ids();
  TW_ASSIGN_OR_RETURN(std::vector<Output> next, body(s, vars));
  TW_RETURN_IF_ERROR(s.status());
  region = RegionSince(*g, mark, loop_first);
  TW_ASSIGN_OR_RETURN(next,
                      CaptureRegion(g, region, next, capture, vars[0].node(), enters[0].node()));
  if (Dtypes(next) != Dtypes(loop_vars)) {
    return absl::InvalidArgumentError(
        absl::StrCat("WhileLoop's body must return one tensor per loop variable, of its dtype: "
                     "the loop variables are ",
                     Dtypes(loop_vars), ", the body returns ", Dtypes(next)));
  }
  for (size_t i = 0; i < next.size(); ++i) {
    const PartialTensorShape& shape = next[i].node()->output_shape(next[i].index());
    if (!ShapeWithin(shape, invariants[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input tensor '", loop_vars[i].name(), "' enters the loop with shape ",
                       invariants[i].DebugString(), ", but has shape ", shape.DebugString(),
                       " after one iteration. To allow the shape to vary across iterations, give "
                       "WhileLoopOptions::shape_invariants a less specific shape"));
    }
    const Output n = NextIteration(s, next[i]);
    TW_RETURN_IF_ERROR(s.status());
    Node* merge = merges[i].node();
    g->RemoveEdge(merge->input_edge(1));
    TW_RETURN_IF_ERROR(g->AddDataEdge(n.node(), n.index(), merge, 1).status());
  }
  return exits;
}

}  // namespace ops
}  // namespace towerflow
