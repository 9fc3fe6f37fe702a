#include "ops/while_gradients.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/status_macros.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/data_flow_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/gradient_sums.h"

namespace towerflow {

struct WhileGradients::ForwardLoop {
  struct Var {
    Node* enter = nullptr;
    Node* merge = nullptr;
    Node* sw = nullptr;    // the Switch on the LoopCond: :1 in the body, :0 to the Exit
    Node* exit = nullptr;  // none when the loop drops the variable's final value
    Output next;           // the body's next value, into the NextIteration
  };
  int frame = 0;
  std::string name;  // the frame's name
  int parallel_iterations = 10;
  Node* loop_cond = nullptr;
  std::vector<Var> vars;
  std::vector<Node*> invariants;  // the is_constant Enters
  // A node of the parent frame that the nodes the gradient adds to the
  // parent frame take a control input from, so they run in the parent
  // frame's iterations: an Identity of a loop variable's initial value (a
  // control edge from a fed placeholder would run the placeholder).
  Node* anchor = nullptr;

  // Added by AddCounter.
  Output count_body;     // the iteration's index, dead after the last one
  Node* sync = nullptr;  // waits for the iteration's pushes; the increment waits for it
  Output count_exit;     // the number of iterations
};

namespace {

// The loop variables a gradient flows through: floating-point numbers, and
// lists (a list's gradient is a list of its elements' gradients).
bool CarriesGradient(DataType dtype) { return DataTypeIsFloating(dtype) || dtype == DT_VARIANT; }

absl::Status NotSupported(absl::string_view loop, absl::string_view why) {
  return absl::UnimplementedError(
      absl::StrCat("Cannot differentiate the while loop '", loop, "': ", why));
}

std::vector<const Edge*> DataOutEdges(const Node* n) {
  std::vector<const Edge*> out;
  for (const Edge* e : n->out_edges()) {
    if (!e->IsControlEdge()) out.push_back(e);
  }
  return out;
}

Output InputOf(const Node* n, int i) {
  const Edge* e = n->input_edge(i);
  return e == nullptr ? Output() : Output(e->src(), e->src_output());
}

// Replaces input 1 of the Merge `merge` (a placeholder while the loop was
// built) with NextIteration(next).
absl::Status CloseLoop(const Scope& s, Node* merge, const Output& next) {
  const ops::NextIteration n(s, next);
  TW_RETURN_IF_ERROR(s.status());
  Graph* g = s.graph();
  g->RemoveEdge(merge->input_edge(1));
  return g->AddDataEdge(n.node(), 0, merge, 1).status();
}

}  // namespace

absl::StatusOr<WhileGradients> WhileGradients::Create(const Graph& graph) {
  TW_ASSIGN_OR_RETURN(ControlFlowInfo info, BuildControlFlowInfo(graph));
  return WhileGradients(std::move(info));
}

int WhileGradients::FrameOf(const Node* n) const {
  if (n->id() < static_cast<int>(info_.frame_of.size()) && info_.frame_of[n->id()] >= 0) {
    return info_.frame_of[n->id()];
  }
  auto it = added_frame_.find(n);
  return it == added_frame_.end() ? kGradientNode : it->second;
}

int WhileGradients::EnteredFrame(const Node* n) const {
  if (!IsEnter(*n)) return -1;
  const int frame = FrameOf(n);
  std::string name;
  if (frame < 0 || !n->GetAttr("frame_name", &name).ok()) return -1;
  for (size_t f = 1; f < info_.frames.size(); ++f) {
    if (info_.frames[f].parent == frame && info_.frames[f].name == name) return static_cast<int>(f);
  }
  return -1;
}

int WhileGradients::OutputFrame(const Output& out) const {
  const int frame = FrameOf(out.node());
  if (frame < 0) return frame;
  if (IsEnter(*out.node())) return EnteredFrame(out.node());
  if (IsExit(*out.node())) return Parent(frame);
  return frame;
}

void WhileGradients::MarkAdded(const Graph& graph, int first, int frame) {
  for (int id = first; id < graph.num_node_ids(); ++id) {
    if (const Node* n = graph.FindNodeId(id)) added_frame_[n] = frame;
  }
}

absl::StatusOr<WhileGradients::ForwardLoop> WhileGradients::Analyze(const Graph& graph,
                                                                    int frame) const {
  ForwardLoop loop;
  loop.frame = frame;
  loop.name = FrameName(frame);
  for (Node* n : graph.nodes()) {
    if (n->id() >= static_cast<int>(info_.frame_of.size()) || EnteredFrame(n) != frame) continue;
    bool is_constant = false;
    TW_RETURN_IF_ERROR(n->GetAttr("is_constant", &is_constant));
    int64_t parallel = 10;
    if (n->GetAttr("parallel_iterations", &parallel).ok() && parallel > 0) {
      loop.parallel_iterations = static_cast<int>(parallel);
    }
    if (is_constant) {
      loop.invariants.push_back(n);
      continue;
    }
    ForwardLoop::Var v;
    v.enter = n;
    const std::vector<const Edge*> outs = DataOutEdges(n);
    if (outs.size() != 1 || !IsMerge(*outs[0]->dst()) || outs[0]->dst()->num_inputs() != 2) {
      return NotSupported(loop.name, absl::StrCat("its Enter '", n->name(),
                                                  "' does not feed exactly one two-input Merge"));
    }
    v.merge = outs[0]->dst();
    const Edge* back = v.merge->input_edge(1 - outs[0]->dst_input());
    if (back == nullptr || !IsNextIteration(*back->src())) {
      return NotSupported(loop.name, absl::StrCat("its Merge '", v.merge->name(),
                                                  "' has no input from a NextIteration"));
    }
    v.next = InputOf(back->src(), 0);
    Node* loop_cond = nullptr;
    for (const Edge* e : DataOutEdges(v.merge)) {
      Node* dst = e->dst();
      const Edge* pred = IsSwitch(*dst) && e->dst_input() == 0 ? dst->input_edge(1) : nullptr;
      if (pred != nullptr && IsLoopCond(*pred->src())) {
        v.sw = dst;
        loop_cond = pred->src();
      }
    }
    if (v.sw == nullptr || !v.next.valid()) {
      return NotSupported(loop.name, absl::StrCat("its Merge '", v.merge->name(),
                                                  "' feeds no Switch on the loop's LoopCond"));
    }
    if (loop.loop_cond != nullptr && loop.loop_cond != loop_cond) {
      return NotSupported(loop.name, absl::StrCat("it has two LoopConds, '", loop.loop_cond->name(),
                                                  "' and '", loop_cond->name(), "'"));
    }
    loop.loop_cond = loop_cond;
    for (const Edge* e : DataOutEdges(v.sw)) {
      if (e->src_output() == 0 && IsExit(*e->dst())) v.exit = e->dst();
    }
    loop.vars.push_back(v);
  }
  if (loop.vars.empty()) return NotSupported(loop.name, "it has no loop variable");
  return loop;
}

absl::Status WhileGradients::AddCounter(const Scope& scope, ForwardLoop* loop) {
  Graph* g = scope.graph();
  const Scope s = scope.NewSubScope("count");
  int first = g->num_node_ids();
  loop->anchor = ops::Identity(s.WithOpName("anchor"), InputOf(loop->vars[0].enter, 0)).node();
  const Output zero = ops::Const(s.WithControlDependencies({Operation(loop->anchor)}), 0);
  const ops::Enter enter(s, zero, loop->name,
                         ops::Enter::ParallelIterations(loop->parallel_iterations));
  TW_RETURN_IF_ERROR(s.status());
  MarkAdded(*g, first, Parent(loop->frame));
  first = g->num_node_ids();
  const ops::Merge merge(s, {enter.output, enter.output});
  const ops::Switch sw(s, merge.output, Output(loop->loop_cond, 0));
  const ops::Exit exit(s, sw.output_false);
  const Output body = ops::Identity(s, sw.output_true);
  const ops::ControlTrigger sync(s.WithControlDependencies(body).WithOpName("sync"));
  const Output one = ops::Const(s.WithControlDependencies(body), 1);
  const Output inc = ops::AddV2(s.WithControlDependencies({sync.operation}), body, one);
  TW_RETURN_IF_ERROR(s.status());
  TW_RETURN_IF_ERROR(CloseLoop(s, merge.node(), inc));
  MarkAdded(*g, first, loop->frame);
  loop->count_body = body;
  loop->sync = sync.operation.node();
  loop->count_exit = exit.output;
  return absl::OkStatus();
}

// One backward loop: built by Build, once.
class WhileGradients::BackwardLoop {
 public:
  BackwardLoop(WhileGradients* loops, const ForwardLoop& forward, const Scope& scope)
      : loops_(loops), fwd_(forward), s_(scope), g_(scope.graph()) {
    for (const ForwardLoop::Var& v : fwd_.vars) {
      loop_nodes_.insert(v.sw);
      loop_nodes_.insert(v.merge);
    }
  }

  absl::StatusOr<EnterGradients> Build(const absl::flat_hash_map<const Node*, Gradient>& exit_grads,
                                       const BodyGradientFn& body_gradient);

 private:
  // A variable of the backward loop.
  struct Var {
    Output body;  // its value in an iteration
    Node* merge;
    Output exit;  // its final value
  };

  Var AddVar(const Output& init, const PartialTensorShape& shape);
  // Rewires the inputs from outside of the nodes with ids [first, end) (the
  // body's gradient) into the backward loop; see Note [While-loop gradients].
  absl::Status Capture(int first, int end);
  absl::StatusOr<Output> CaptureValue(const Output& x);
  absl::StatusOr<Output> Pop(const Output& x);

  // Note [Values in Cond branches]
  // A forward value computed in a branch of a Cond inside the body exists
  // only in the iterations that take the branch, so its push runs only in
  // those. Its pop must run in the same backward iterations: it takes a
  // control input from a pivot that is dead unless the branch's predicate,
  // itself popped, says the branch was taken (TF's grad cond contexts).
  //
  // A value's guards are the (predicate, side) pairs it is live under: a
  // Cond Switch's output adds its own to its inputs'; a Cond Merge is live
  // under what all its inputs share (the branches' own guards drop out);
  // every other node is live under the union of its inputs', control inputs
  // included. Loop structure and values from outside the body have none.
  using Guard = std::tuple<std::string, int, int>;  // predicate node, output, side
  using Guards = std::set<Guard>;
  // Computes the guards of `root` and of the body nodes behind it.
  void ComputeGuards(const Node* root);
  Guards ValueGuards(const Node* n, int port);
  bool IsLoopStructure(const Node* n) const {
    return loops_->FrameOf(n) != fwd_.frame || IsEnter(*n) || IsExit(*n) || IsNextIteration(*n) ||
           loop_nodes_.contains(n);
  }
  // pivot_ where `guards` is empty, else a pivot live only under them.
  absl::StatusOr<Output> GuardPivot(const Guards& guards);

  // Whether `n` is part of this backward loop (made since it started, and
  // not a node added to a forward loop).
  bool Inside(const Node* n) const {
    return n->id() >= first_id_ && !loops_->added_frame_.contains(n);
  }
  // Whether `frame` is the forward loop's or one nested in it.
  bool InForwardLoop(int frame) const {
    for (int f = frame; f >= 0; f = loops_->Parent(f)) {
      if (f == fwd_.frame) return true;
    }
    return false;
  }
  ops::Enter::Attrs EnterAttrs(bool is_constant) const {
    return ops::Enter::IsConstant(is_constant).ParallelIterations(fwd_.parallel_iterations);
  }

  WhileGradients* const loops_;
  const ForwardLoop& fwd_;
  const Scope s_;
  Graph* const g_;
  absl::flat_hash_set<const Node*> loop_nodes_;  // the variables' Merges and Switches
  absl::flat_hash_map<const Node*, Guards> node_guards_;
  std::map<Guards, Output> guard_pivots_;

  int first_id_ = 0;
  std::string frame_;
  Output loop_cond_;
  Output pivot_;           // the iteration's counter, dead after the last one
  Node* enter_ = nullptr;  // the counter's Enter: control inputs from outside go there
  Node* sync_ = nullptr;   // waits for the iteration's pops; the decrement waits for it
  std::map<std::pair<const Node*, int>, Output> captured_;
};

WhileGradients::BackwardLoop::Var WhileGradients::BackwardLoop::AddVar(
    const Output& init, const PartialTensorShape& shape) {
  const ops::Enter enter(s_, init, frame_, EnterAttrs(false));
  const ops::Merge merge(s_, {enter.output, enter.output});
  if (s_.ok()) g_->SetOutputShape(merge.node(), 0, shape);
  const ops::Switch sw(s_, merge.output, loop_cond_);
  return Var{ops::Identity(s_, sw.output_true), merge.node(), ops::Exit(s_, sw.output_false)};
}

absl::StatusOr<WhileGradients::EnterGradients> WhileGradients::BackwardLoop::Build(
    const absl::flat_hash_map<const Node*, Gradient>& exit_grads,
    const BodyGradientFn& body_gradient) {
  first_id_ = g_->num_node_ids();
  frame_ = s_.GetUniqueNameForOp("while_context");

  // The counter: N, N-1, ..., 1 in the iterations.
  const ops::Enter count_enter(s_, fwd_.count_exit, frame_, EnterAttrs(false));
  const ops::Merge count_merge(s_, {count_enter.output, count_enter.output});
  const Output zero = ops::Const(s_.WithControlDependencies(count_merge.output), 0);
  loop_cond_ = ops::LoopCond(s_, ops::Greater(s_, count_merge.output, zero));
  const ops::Switch count_sw(s_, count_merge.output, loop_cond_);
  ops::Exit(s_, count_sw.output_false);
  pivot_ = ops::Identity(s_.WithOpName("pivot"), count_sw.output_true);
  const ops::ControlTrigger sync(s_.WithControlDependencies(pivot_).WithOpName("sync"));
  const Output one = ops::Const(s_.WithControlDependencies(pivot_), 1);
  const Output dec = ops::Sub(s_.WithControlDependencies({sync.operation}), pivot_, one);
  TW_RETURN_IF_ERROR(s_.status());
  TW_RETURN_IF_ERROR(CloseLoop(s_, count_merge.node(), dec));
  enter_ = count_enter.node();
  sync_ = sync.operation.node();

  // The gradients of the differentiable loop variables, from their Exits'.
  std::vector<const ForwardLoop::Var*> diff;
  std::vector<Var> grads;
  for (const ForwardLoop::Var& v : fwd_.vars) {
    if (!CarriesGradient(v.enter->output_type(0))) continue;
    Output init;
    auto it = v.exit == nullptr ? exit_grads.end() : exit_grads.find(v.exit);
    if (it != exit_grads.end() && !it->second.is_none()) {
      init = Densify(s_, it->second);
    } else {
      init = ops::ZerosLike(s_, v.exit != nullptr ? Output(v.exit, 0) : InputOf(v.enter, 0));
    }
    grads.push_back(AddVar(init, v.merge->output_shape(0)));
    diff.push_back(&v);
  }
  TW_RETURN_IF_ERROR(s_.status());

  // One iteration of the body's gradient.
  const int body_first = g_->num_node_ids();
  std::vector<Output> ys, xs, grad_ys;
  for (size_t i = 0; i < diff.size(); ++i) {
    ys.push_back(diff[i]->next);
    xs.push_back(Output(diff[i]->sw, 1));
    grad_ys.push_back(grads[i].body);
  }
  for (Node* c : fwd_.invariants) xs.push_back(Output(c, 0));
  std::vector<Gradient> body;
  if (!diff.empty()) {
    TW_ASSIGN_OR_RETURN(body, body_gradient(s_.NewSubScope("body"), fwd_.frame, ys, xs, grad_ys));
  } else {
    body.resize(xs.size());
  }
  std::vector<Output> next;
  for (size_t i = 0; i < diff.size(); ++i) {
    next.push_back(body[i].is_none() ? Output(ops::ZerosLike(s_, grads[i].body))
                                     : Densify(s_, body[i]));
  }
  std::vector<Output> invariant_grads(fwd_.invariants.size());
  for (size_t j = 0; j < fwd_.invariants.size(); ++j) {
    const Gradient& g = body[diff.size() + j];
    if (!g.is_none()) invariant_grads[j] = Densify(s_, g);
  }
  TW_RETURN_IF_ERROR(s_.status());
  TW_RETURN_IF_ERROR(Capture(body_first, g_->num_node_ids()));

  EnterGradients result;
  for (size_t i = 0; i < diff.size(); ++i) {
    TW_RETURN_IF_ERROR(CloseLoop(s_, grads[i].merge, next[i]));
    result.emplace_back(diff[i]->enter->input_edge(0), Gradient(grads[i].exit));
  }
  for (const ForwardLoop::Var& v : fwd_.vars) {
    if (!CarriesGradient(v.enter->output_type(0))) {
      result.emplace_back(v.enter->input_edge(0), Gradient());
    }
  }
  // Each invariant's gradient: the sum over the iterations.
  for (size_t j = 0; j < fwd_.invariants.size(); ++j) {
    const Edge* in = fwd_.invariants[j]->input_edge(0);
    const Output& dj = invariant_grads[j];
    const Output x(in->src(), in->src_output());
    Output zeros;
    if (dj.valid() && BaseType(x.type()) == BaseType(dj.type())) {
      zeros = ops::ZerosLike(s_, x);
    } else if (dj.valid() && BaseType(x.type()) == DT_RESOURCE) {
      zeros = ops::ZerosLike(s_, ops::ReadVariableOp(s_, x, BaseType(dj.type())));
    }
    if (!zeros.valid()) {
      result.emplace_back(in, Gradient());
      continue;
    }
    const Var sum = AddVar(zeros, zeros.node()->output_shape(zeros.index()));
    TW_RETURN_IF_ERROR(s_.status());
    TW_RETURN_IF_ERROR(CloseLoop(s_, sum.merge, ops::AddV2(s_, sum.body, dj)));
    result.emplace_back(in, Gradient(sum.exit));
  }
  TW_RETURN_IF_ERROR(s_.status());
  return result;
}

absl::Status WhileGradients::BackwardLoop::Capture(int first, int end) {
  for (int id = first; id < end; ++id) {
    Node* n = g_->FindNodeId(id);
    if (n == nullptr || loops_->added_frame_.contains(n)) continue;
    const std::vector<const Edge*> in_edges = n->in_edges();  // edited below
    for (const Edge* e : in_edges) {
      Node* src = e->src();
      if (Inside(src)) continue;
      if (e->IsControlEdge()) {
        // An order on the forward pass means nothing here; one on a node
        // outside holds for the whole backward loop.
        g_->RemoveEdge(e);
        if (!InForwardLoop(loops_->FrameOf(src))) g_->AddControlEdge(src, enter_);
        continue;
      }
      TW_ASSIGN_OR_RETURN(const Output v, CaptureValue(Output(src, e->src_output())));
      const int dst_input = e->dst_input();
      g_->RemoveEdge(e);
      TW_RETURN_IF_ERROR(g_->AddDataEdge(v.node(), v.index(), n, dst_input).status());
    }
    bool has_inside_input = false;
    for (const Edge* e : n->in_edges()) has_inside_input |= Inside(e->src());
    if (!has_inside_input) g_->AddControlEdge(pivot_.node(), n);
  }
  return absl::OkStatus();
}

absl::StatusOr<Output> WhileGradients::BackwardLoop::CaptureValue(const Output& x) {
  const auto key = std::make_pair(static_cast<const Node*>(x.node()), x.index());
  auto it = captured_.find(key);
  if (it != captured_.end()) return it->second;
  Output value;
  const int frame = loops_->OutputFrame(x);
  if (loops_->EnteredFrame(x.node()) == fwd_.frame) {
    bool is_constant = false;
    TW_RETURN_IF_ERROR(x.node()->GetAttr("is_constant", &is_constant));
    if (!is_constant) {
      return NotSupported(fwd_.name, absl::StrCat("its gradient needs the value of the Enter '",
                                                  x.node()->name(), "' inside the loop"));
    }
    // A loop invariant: the value it enters, entered into the backward loop.
    TW_ASSIGN_OR_RETURN(value, CaptureValue(InputOf(x.node(), 0)));
  } else if (frame == fwd_.frame) {
    TW_ASSIGN_OR_RETURN(value, Pop(x));
  } else if (InForwardLoop(frame)) {
    return NotSupported(
        fwd_.name, absl::StrCat("its gradient needs '", x.name(), "' from inside an inner loop"));
  } else {
    value = ops::Enter(s_, x, frame_, EnterAttrs(true)).output;
    TW_RETURN_IF_ERROR(s_.status());
  }
  captured_.emplace(key, value);
  return value;
}

void WhileGradients::BackwardLoop::ComputeGuards(const Node* root) {
  // Post-order over the body's nodes behind `root`, without recursion (a
  // body may be long); a node met again while pending (a cycle, which only
  // a malformed graph has) counts as unguarded.
  std::vector<std::pair<const Node*, bool>> stack{{root, false}};
  absl::flat_hash_set<const Node*> pending;
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    if (node_guards_.contains(n)) {
      stack.pop_back();
      continue;
    }
    if (IsLoopStructure(n)) {
      node_guards_[n] = {};
      stack.pop_back();
      continue;
    }
    if (!expanded) {
      stack.back().second = true;
      pending.insert(n);
      for (const Edge* e : n->in_edges()) {
        if (!node_guards_.contains(e->src()) && !pending.contains(e->src())) {
          stack.push_back({e->src(), false});
        }
      }
      continue;
    }
    stack.pop_back();
    pending.erase(n);
    Guards guards;
    bool first = true;
    for (const Edge* e : n->in_edges()) {
      if (!node_guards_.contains(e->src())) continue;  // on a cycle
      if (IsMerge(*n)) {
        if (e->IsControlEdge()) continue;
        const Guards in = ValueGuards(e->src(), e->src_output());
        if (first) {
          guards = in;
        } else {
          Guards shared;
          std::set_intersection(guards.begin(), guards.end(), in.begin(), in.end(),
                                std::inserter(shared, shared.begin()));
          guards = std::move(shared);
        }
        first = false;
      } else if (e->IsControlEdge()) {
        const Guards& in = node_guards_[e->src()];
        guards.insert(in.begin(), in.end());
      } else {
        const Guards in = ValueGuards(e->src(), e->src_output());
        guards.insert(in.begin(), in.end());
      }
    }
    node_guards_[n] = std::move(guards);
  }
}

WhileGradients::BackwardLoop::Guards WhileGradients::BackwardLoop::ValueGuards(const Node* n,
                                                                               int port) {
  Guards guards = node_guards_[n];
  if (IsSwitch(*n) && !IsLoopStructure(n)) {
    const Output pred = InputOf(n, 1);
    if (pred.valid()) guards.emplace(pred.node()->name(), pred.index(), port);
  }
  return guards;
}

absl::StatusOr<Output> WhileGradients::BackwardLoop::GuardPivot(const Guards& guards) {
  if (guards.empty()) return pivot_;
  auto it = guard_pivots_.find(guards);
  if (it != guard_pivots_.end()) return it->second;
  Output pivot = pivot_;
  for (const Guard& guard : guards) {
    Node* pred = g_->FindNode(std::get<0>(guard));
    if (pred == nullptr) return absl::InternalError("a Cond's predicate left the graph");
    TW_ASSIGN_OR_RETURN(const Output taken, CaptureValue(Output(pred, std::get<1>(guard))));
    const ops::Switch sw(s_, pivot, taken);
    pivot = ops::Identity(s_, std::get<2>(guard) == 1 ? sw.output_true : sw.output_false);
  }
  TW_RETURN_IF_ERROR(s_.status());
  guard_pivots_.emplace(guards, pivot);
  return pivot;
}

absl::StatusOr<Output> WhileGradients::BackwardLoop::Pop(const Output& x) {
  ComputeGuards(x.node());
  TW_ASSIGN_OR_RETURN(const Output pop_pivot, GuardPivot(ValueGuards(x.node(), x.index())));
  const DataType type = BaseType(x.type());
  const Scope s = s_.NewSubScope("stack");
  // The stack, made in the forward loop's parent frame (once per run of the
  // loop), and its handle entered into the forward loop.
  int first = g_->num_node_ids();
  const Output max_size = ops::Const(s.WithControlDependencies({Operation(fwd_.anchor)}), -1);
  const ops::StackV2 stack(s, max_size, type, ops::StackV2::StackName(x.name()));
  const ops::Enter forward_handle(s, stack.handle, fwd_.name, EnterAttrs(true));
  TW_RETURN_IF_ERROR(s.status());
  loops_->MarkAdded(*g_, first, loops_->Parent(fwd_.frame));
  // The push, in each forward iteration (not after the last: the counter's
  // value is dead there), before the iteration's counter moves on.
  first = g_->num_node_ids();
  const ops::StackPushV2 push(s.WithControlDependencies(fwd_.count_body), forward_handle, x);
  TW_RETURN_IF_ERROR(s.status());
  g_->AddControlEdge(push.operation.node(), fwd_.sync);
  loops_->MarkAdded(*g_, first, fwd_.frame);
  // The pop, in each backward iteration whose forward iteration pushed (Note
  // [Values in Cond branches]), before the counter moves on.
  const ops::Enter handle(s, stack.handle, frame_, EnterAttrs(true));
  const ops::StackPopV2 pop(s.WithControlDependencies(pop_pivot), handle, type);
  TW_RETURN_IF_ERROR(s.status());
  g_->AddControlEdge(pop.operation.node(), sync_);
  g_->SetOutputShape(pop.operation.node(), 0, x.node()->output_shape(x.index()));
  return pop.elem;
}

absl::StatusOr<WhileGradients::EnterGradients> WhileGradients::Differentiate(
    const Scope& scope, int frame, const absl::flat_hash_map<const Node*, Gradient>& exit_grads,
    const BodyGradientFn& body_gradient) {
  TW_ASSIGN_OR_RETURN(ForwardLoop loop, Analyze(*scope.graph(), frame));
  // "while/while_context" -> "while_grad".
  const std::string stem(absl::StripSuffix(loop.name, "/while_context"));
  const Scope s = scope.NewSubScope(absl::StrCat(stem, "_grad"));
  TW_RETURN_IF_ERROR(AddCounter(s, &loop));
  BackwardLoop backward(this, loop, s);
  return backward.Build(exit_grads, body_gradient);
}

}  // namespace towerflow
