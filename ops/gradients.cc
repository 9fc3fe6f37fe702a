#include "ops/gradients.h"

#include <deque>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/control_flow.h"
#include "ops/function_gradients.h"
#include "ops/gen/array_ops.h"
#include "ops/while_gradients.h"

namespace towerflow {

namespace {

// The gradients of a function call's second run outside every loop: a
// builder of their own.
SubgraphGradientFn OwnBuilder() {
  return [](const Scope& scope, const std::vector<Output>& ys, const std::vector<Output>& xs,
            const std::vector<Output>& grad_ys) {
    GradientOptions options;
    options.allow_unreachable = true;
    return ComputeSymbolicGradients(scope, ys, xs, grad_ys, options);
  };
}

}  // namespace

namespace {

// Note [Backprop order]
// The builder follows TensorFlow's tf.gradients: it marks the ops between
// the xs and the ys (reachable forwards from an x and backwards from a y),
// counts for each of them the data edges to consumers inside that set, and
// differentiates an op once all those consumers have sent their gradient
// (a topological order of the reversed subgraph). Outputs of ys are seeded
// with grad_ys before the walk starts, so a y that feeds another y gets both
// its seed and the gradient flowing back through the other.
//
// In a graph with while loops, the builder works in one frame (the root, or
// a loop's body when it differentiates that body) and takes each loop one
// level in as a whole: once the gradients of all its Exits have arrived,
// WhileGradients builds the backward loop and the builder sends the
// gradients it returns to the loop's Enters' inputs. The nodes inside the
// loop are never differentiated one by one. See Note [While-loop gradients]
// in ops/while_gradients.h.
class GradientBuilder {
 public:
  // `loops`: the graph's loops, null when it has none. `frame`: the frame
  // the ys and xs are in. `stop_at_xs`: the walk back from the ys ends at
  // the xs (a loop body's gradient stops at the body's inputs).
  GradientBuilder(const Scope& scope, std::vector<Output> ys, std::vector<Output> xs,
                  std::vector<Output> grad_ys, const GradientOptions& options,
                  WhileGradients* loops, int frame, bool stop_at_xs)
      : scope_(scope),
        ys_(std::move(ys)),
        xs_(std::move(xs)),
        grad_ys_(std::move(grad_ys)),
        options_(options),
        loops_(loops),
        frame_(frame),
        stop_at_xs_(stop_at_xs) {
    for (const Output& x : xs_) {
      if (x.valid()) x_nodes_.insert(x.node());
    }
  }

  absl::StatusOr<std::vector<Gradient>> Build();

 private:
  // What a node is to the builder's frame: an op it differentiates, the
  // Exit of a loop one level in, or part of a loop (or outside the frame).
  enum class Role { kOp, kLoopExit, kInLoop };
  Role RoleOf(const Node* n) const;

  absl::Status Validate() const;
  void MarkBetween();
  // The sum of the gradients that arrived for `out`; none when none did.
  absl::StatusOr<Gradient> Sum(const Scope& scope, const Output& out);
  // Differentiates `node`, sending gradients to its producers.
  absl::Status Backprop(const Scope& scope, Node* node, std::vector<Gradient> dys);
  // Records the gradient of a loop's Exit; the last of the loop's Exits
  // builds its backward loop.
  absl::Status LoopExitReached(Node* exit, const Gradient& grad);
  void Send(const Edge* edge, const Gradient& grad);

  // Whether `n` is a NextIteration of the loop body this builder
  // differentiates.
  bool IsBodyNextIteration(const Node& n) const {
    return stop_at_xs_ && loops_ != nullptr && IsNextIteration(n) && loops_->FrameOf(&n) == frame_;
  }

  bool Between(const Node* n) const {
    return n->id() < static_cast<int>(between_.size()) && between_[n->id()];
  }

  const Scope scope_;
  const std::vector<Output> ys_, xs_;
  std::vector<Output> grad_ys_;
  const GradientOptions options_;
  WhileGradients* const loops_;
  const int frame_;
  const bool stop_at_xs_;
  absl::flat_hash_set<const Node*> x_nodes_;
  Scope grad_scope_ = scope_;
  // By loop frame: the Exits whose gradients are still to come, and those
  // that came.
  absl::flat_hash_map<int, int> exits_left_;
  absl::flat_hash_map<int, absl::flat_hash_map<const Node*, Gradient>> exit_grads_;

  std::vector<bool> reachable_from_ys_;
  std::vector<bool> between_;
  std::vector<int> pending_;
  absl::flat_hash_map<Output, std::vector<Gradient>> arrived_;
  std::deque<Node*> ready_;
};

GradientBuilder::Role GradientBuilder::RoleOf(const Node* n) const {
  if (loops_ == nullptr) return Role::kOp;
  const int frame = loops_->FrameOf(n);
  if (frame == WhileGradients::kGradientNode) return Role::kOp;
  if (IsExit(*n) && loops_->Parent(frame) == frame_) return Role::kLoopExit;
  if (frame == frame_ && !IsEnter(*n)) return Role::kOp;
  return Role::kInLoop;
}

absl::Status GradientBuilder::Validate() const {
  TW_RETURN_IF_ERROR(scope_.status());
  if (grad_ys_.size() != ys_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Got ", grad_ys_.size(), " grad_ys for ", ys_.size(), " ys; they must match"));
  }
  auto check = [&](const Output& o, const char* what, size_t i) -> absl::Status {
    if (!o.valid()) {
      return absl::InvalidArgumentError(absl::StrCat(what, "[", i, "] is not a valid output"));
    }
    if (o.node()->id() >= scope_.graph()->num_node_ids() ||
        scope_.graph()->FindNodeId(o.node()->id()) != o.node()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, "[", i, "] (", o.name(), ") is not in the scope's graph"));
    }
    const int frame = loops_ == nullptr ? frame_ : loops_->OutputFrame(o);
    if (frame != frame_ && frame != WhileGradients::kGradientNode) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, "[", i, "] (", o.name(), ") is inside the while loop '", loops_->FrameName(frame),
          "': gradients are taken of and with respect to a loop's outputs and the tensors it "
          "reads, not the tensors of one iteration"));
    }
    return absl::OkStatus();
  };
  for (size_t i = 0; i < ys_.size(); ++i) {
    TW_RETURN_IF_ERROR(check(ys_[i], "ys", i));
    TW_RETURN_IF_ERROR(check(grad_ys_[i], "grad_ys", i));
    if (ys_[i].type() != grad_ys_[i].type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "grad_ys[", i, "] (", grad_ys_[i].name(), ") is ", DataTypeString(grad_ys_[i].type()),
          " but ys[", i, "] (", ys_[i].name(), ") is ", DataTypeString(ys_[i].type())));
    }
  }
  for (size_t i = 0; i < xs_.size(); ++i) TW_RETURN_IF_ERROR(check(xs_[i], "xs", i));
  return absl::OkStatus();
}

void GradientBuilder::MarkBetween() {
  const int n = scope_.graph()->num_node_ids();
  reachable_from_ys_.assign(n, false);
  std::deque<Node*> queue;
  for (const Output& y : ys_) {
    if (!reachable_from_ys_[y.node()->id()]) {
      reachable_from_ys_[y.node()->id()] = true;
      queue.push_back(y.node());
    }
  }
  while (!queue.empty()) {
    Node* node = queue.front();
    queue.pop_front();
    if (stop_at_xs_ && x_nodes_.contains(node)) continue;
    for (const Edge* e : node->in_edges()) {
      if (e->IsControlEdge() || reachable_from_ys_[e->src()->id()]) continue;
      // A loop body's gradient is one iteration's: it does not follow a
      // loop variable back to the iteration before (a body that returns all
      // its values from one node, as a lowered While's IdentityN, would
      // otherwise wait on itself through a variable without a gradient).
      if (IsBodyNextIteration(*e->src())) continue;
      reachable_from_ys_[e->src()->id()] = true;
      queue.push_back(e->src());
    }
  }
  between_.assign(n, false);
  for (const Output& x : xs_) {
    Node* node = x.node();
    if (reachable_from_ys_[node->id()] && !between_[node->id()]) {
      between_[node->id()] = true;
      queue.push_back(node);
    }
  }
  while (!queue.empty()) {
    Node* node = queue.front();
    queue.pop_front();
    for (const Edge* e : node->out_edges()) {
      Node* dst = e->dst();
      if (e->IsControlEdge() || !reachable_from_ys_[dst->id()] || between_[dst->id()]) continue;
      between_[dst->id()] = true;
      queue.push_back(dst);
    }
  }
  pending_.assign(n, 0);
  for (Node* node : scope_.graph()->nodes()) {
    if (!between_[node->id()]) continue;
    for (const Edge* e : node->out_edges()) {
      if (!e->IsControlEdge() && between_[e->dst()->id()]) ++pending_[node->id()];
    }
    if (RoleOf(node) == Role::kLoopExit) ++exits_left_[loops_->FrameOf(node)];
  }
}

absl::StatusOr<Gradient> GradientBuilder::Sum(const Scope& scope, const Output& out) {
  auto it = arrived_.find(out);
  if (it == arrived_.end()) return Gradient();
  return AddGradients(scope, it->second);
}

void GradientBuilder::Send(const Edge* edge, const Gradient& grad) {
  Node* src = edge->src();
  if (!Between(src) || !Between(edge->dst())) return;
  arrived_[Output(src, edge->src_output())].push_back(grad);
  if (--pending_[src->id()] == 0) ready_.push_back(src);
}

absl::Status GradientBuilder::Backprop(const Scope& scope, Node* node, std::vector<Gradient> dys) {
  std::vector<const Edge*> inputs(node->num_inputs(), nullptr);
  bool any_input_between = false;
  for (const Edge* e : node->in_edges()) {
    if (e->IsControlEdge()) continue;
    inputs[e->dst_input()] = e;
    any_input_between |= Between(e->src());
  }
  // Nothing upstream wants a gradient (the node is an x, or its inputs lead
  // only to constants): do not differentiate it.
  if (!any_input_between) return absl::OkStatus();
  bool all_none = true;
  for (const Gradient& g : dys) all_none &= g.is_none();
  auto send_none = [&] {
    for (const Edge* e : inputs) {
      if (e != nullptr) Send(e, Gradient());
    }
    return absl::OkStatus();
  };
  if (all_none) return send_none();
  // Gradient functions take dense gradients, zeros for outputs without one.
  const auto densify = [&]() -> absl::StatusOr<std::vector<Output>> {
    std::vector<Output> dense(dys.size());
    for (size_t i = 0; i < dys.size(); ++i) {
      dense[i] = dys[i].is_none() ? Output(ops::ZerosLike(scope, Output(node, i)))
                                  : Densify(scope, dys[i]);
    }
    TW_RETURN_IF_ERROR(scope.status());
    return dense;
  };

  std::vector<Gradient> dxs;
  if (IsFunctionCall(*scope_.graph(), *node)) {
    TW_ASSIGN_OR_RETURN(const std::vector<Output> dense, densify());
    // In a loop body, this builder's frame differentiates the call's second
    // run, so it runs in the backward loop (Note [Gradients of function
    // calls] in ops/function_gradients.h).
    const SubgraphGradientFn in_body = [this](const Scope& s, const std::vector<Output>& ys,
                                              const std::vector<Output>& xs,
                                              const std::vector<Output>& grad_ys) {
      GradientOptions options;
      options.allow_unreachable = true;
      GradientBuilder nested(s, ys, xs, grad_ys, options, loops_, frame_, /*stop_at_xs=*/true);
      return nested.Build();
    };
    TW_RETURN_IF_ERROR(FunctionCallGradient(scope, Operation(node), dense, &dxs,
                                            frame_ != 0 ? in_body : OwnBuilder(),
                                            /*in_loop_body=*/frame_ != 0));
  } else {
    TW_ASSIGN_OR_RETURN(const GradientRegistry::Entry* entry,
                        GradientRegistry::Global()->Lookup(node->type_string()));
    if (entry->no_gradient()) return send_none();
    if (entry->pass_through) {
      dxs.assign(node->num_inputs(), Gradient());
      if (!dxs.empty()) dxs[0] = dys[0];
    } else {
      TW_ASSIGN_OR_RETURN(const std::vector<Output> dense, densify());
      if (entry->sparse) {
        TW_RETURN_IF_ERROR(entry->sparse(scope, Operation(node), dense, &dxs));
      } else {
        std::vector<Output> out;
        TW_RETURN_IF_ERROR(entry->dense(scope, Operation(node), dense, &out));
        dxs.assign(out.begin(), out.end());
      }
    }
  }
  TW_RETURN_IF_ERROR(scope.status());
  if (static_cast<int>(dxs.size()) != node->num_inputs()) {
    return absl::InternalError(absl::StrCat("Gradient of ", node->type_string(), " node '",
                                            node->name(), "' returned ", dxs.size(),
                                            " gradients for ", node->num_inputs(), " inputs"));
  }
  for (int i = 0; i < node->num_inputs(); ++i) {
    if (inputs[i] != nullptr) Send(inputs[i], dxs[i]);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Gradient>> GradientBuilder::Build() {
  TW_RETURN_IF_ERROR(Validate());
  MarkBetween();
  std::vector<Gradient> result(xs_.size());
  absl::flat_hash_map<Output, std::vector<size_t>> x_index;
  for (size_t i = 0; i < xs_.size(); ++i) {
    if (!reachable_from_ys_[xs_[i].node()->id()]) {
      if (options_.allow_unreachable) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("Cannot compute the partial derivative for node '", xs_[i].node()->name(),
                       "' as it's unreachable from the output node(s)."));
    }
    x_index[xs_[i]].push_back(i);
  }
  grad_scope_ = scope_.NewSubScope("gradients");
  for (size_t i = 0; i < ys_.size(); ++i) {
    if (Between(ys_[i].node())) arrived_[ys_[i]].push_back(grad_ys_[i]);
  }
  for (Node* node : scope_.graph()->nodes()) {
    if (Between(node) && pending_[node->id()] == 0 &&
        (RoleOf(node) != Role::kInLoop || x_nodes_.contains(node))) {
      ready_.push_back(node);
    }
  }
  while (!ready_.empty()) {
    Node* node = ready_.front();
    ready_.pop_front();
    // "gradients/<node>_grad", colocated with the node: its sums and its
    // backward ops.
    const Scope node_scope =
        grad_scope_.NewSubScope(absl::StrCat(node->name(), "_grad")).ColocateWith(Operation(node));
    std::vector<Gradient> dys(node->num_outputs());
    for (int i = 0; i < node->num_outputs(); ++i) {
      const Output out(node, i);
      TW_ASSIGN_OR_RETURN(dys[i], Sum(node_scope, out));
      auto xi = x_index.find(out);
      if (xi != x_index.end()) {
        for (size_t k : xi->second) result[k] = dys[i];
      }
    }
    switch (RoleOf(node)) {
      case Role::kOp:
        if (!(stop_at_xs_ && x_nodes_.contains(node))) {
          TW_RETURN_IF_ERROR(Backprop(node_scope, node, std::move(dys)));
        }
        break;
      case Role::kLoopExit:
        TW_RETURN_IF_ERROR(LoopExitReached(node, dys[0]));
        break;
      case Role::kInLoop:  // an x inside a loop's frame: only its gradient is wanted
        break;
    }
  }
  return result;
}

absl::Status GradientBuilder::LoopExitReached(Node* exit, const Gradient& grad) {
  const int loop = loops_->FrameOf(exit);
  exit_grads_[loop][exit] = grad;
  if (--exits_left_[loop] > 0) return absl::OkStatus();
  const WhileGradients::BodyGradientFn body =
      [this](const Scope& scope, int frame, const std::vector<Output>& ys,
             const std::vector<Output>& xs,
             const std::vector<Output>& grad_ys) -> absl::StatusOr<std::vector<Gradient>> {
    GradientOptions options;
    options.allow_unreachable = true;
    GradientBuilder body_builder(scope, ys, xs, grad_ys, options, loops_, frame,
                                 /*stop_at_xs=*/true);
    return body_builder.Build();
  };
  TW_ASSIGN_OR_RETURN(const WhileGradients::EnterGradients enter_grads,
                      loops_->Differentiate(grad_scope_, loop, exit_grads_[loop], body));
  for (const auto& eg : enter_grads) Send(eg.first, eg.second);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Gradient>> ComputeSymbolicGradients(const Scope& scope,
                                                               const std::vector<Output>& ys,
                                                               const std::vector<Output>& xs,
                                                               const std::vector<Output>& grad_ys,
                                                               const GradientOptions& options) {
  std::vector<Output> seeds = grad_ys;
  if (seeds.empty()) {
    Scope ones = scope.NewSubScope("gradients_seed");
    for (const Output& y : ys) {
      seeds.push_back(y.valid() ? Output(ops::OnesLike(ones.ColocateWith(y), y)) : Output());
    }
  }
  std::optional<WhileGradients> loops;
  if (HasControlFlow(*scope.graph())) {
    absl::StatusOr<WhileGradients> made = WhileGradients::Create(*scope.graph());
    if (!made.ok()) {
      scope.UpdateStatus(made.status());
      return made.status();
    }
    loops.emplace(*std::move(made));
  }
  GradientBuilder builder(scope, ys, xs, std::move(seeds), options,
                          loops.has_value() ? &*loops : nullptr, /*frame=*/0,
                          /*stop_at_xs=*/false);
  absl::StatusOr<std::vector<Gradient>> grads = builder.Build();
  if (!grads.ok()) scope.UpdateStatus(grads.status());
  return grads;
}

namespace {

absl::Status DenseGradients(const Scope& scope, const std::vector<Output>& ys,
                            const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                            std::vector<Output>* grads) {
  TW_ASSIGN_OR_RETURN(std::vector<Gradient> g, ComputeSymbolicGradients(scope, ys, xs, grad_ys));
  grads->clear();
  for (const Gradient& gi : g) {
    grads->push_back(gi.is_sparse() ? Densify(scope.NewSubScope("gradients_dense"), gi)
                                    : gi.dense());
  }
  return scope.status();
}

}  // namespace

absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                                  const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                                  std::vector<Output>* grads) {
  if (grad_ys.size() != ys.size()) {
    absl::Status s = absl::InvalidArgumentError(
        absl::StrCat("Got ", grad_ys.size(), " grad_ys for ", ys.size(), " ys; they must match"));
    scope.UpdateStatus(s);
    return s;
  }
  return DenseGradients(scope, ys, xs, grad_ys, grads);
}

absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                                  const std::vector<Output>& xs, std::vector<Output>* grads) {
  return DenseGradients(scope, ys, xs, {}, grads);
}

namespace {

// The registry's entries for the call ops, for completeness: the builder
// calls FunctionCallGradient itself, with its loop body's builder where there
// is one (GradientBuilder::Backprop above).
absl::Status RegisteredCallGradient(const Scope& scope, const Operation& op,
                                    const std::vector<Output>& grad_inputs,
                                    std::vector<Gradient>* grad_outputs) {
  TW_RETURN_IF_ERROR(CheckCallOutsideLoops(*scope.graph(), *op.node()));
  return FunctionCallGradient(scope, op, grad_inputs, grad_outputs, OwnBuilder(),
                              /*in_loop_body=*/false);
}

}  // namespace

TW_REGISTER_GRADIENT("PartitionedCall", RegisteredCallGradient);
TW_REGISTER_GRADIENT("StatefulPartitionedCall", RegisteredCallGradient);
TW_REGISTER_GRADIENT("If", RegisteredCallGradient);
TW_REGISTER_GRADIENT("StatelessIf", RegisteredCallGradient);
TW_REGISTER_GRADIENT("Case", RegisteredCallGradient);
TW_REGISTER_GRADIENT("StatelessCase", RegisteredCallGradient);
TW_REGISTER_GRADIENT("While", RegisteredCallGradient);
TW_REGISTER_GRADIENT("StatelessWhile", RegisteredCallGradient);

}  // namespace towerflow
