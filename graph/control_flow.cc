#include "graph/control_flow.h"

#include <deque>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace towerflow {
namespace {

bool IsOneOf(const Node& n, const char* op) {
  return n.type_string() == op || n.type_string() == absl::StrCat("Ref", op);
}

std::string FrameLabel(const ControlFlowInfo& info, int frame) {
  return frame == 0 ? std::string("the root frame")
                    : absl::StrCat("while-loop frame '", info.frames[frame].name, "'");
}

}  // namespace

bool IsSwitch(const Node& n) { return IsOneOf(n, "Switch"); }
bool IsMerge(const Node& n) { return IsOneOf(n, "Merge"); }
bool IsEnter(const Node& n) { return IsOneOf(n, "Enter"); }
bool IsExit(const Node& n) { return IsOneOf(n, "Exit"); }
bool IsNextIteration(const Node& n) { return IsOneOf(n, "NextIteration"); }
bool IsLoopCond(const Node& n) { return n.type_string() == "LoopCond"; }
bool IsControlTrigger(const Node& n) { return n.type_string() == "ControlTrigger"; }

bool HasControlFlow(const Graph& graph) {
  for (const Node* n : graph.nodes()) {
    if (IsSwitch(*n) || IsMerge(*n) || IsEnter(*n) || IsExit(*n) || IsNextIteration(*n)) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& graph) {
  ControlFlowInfo info;
  info.frames.push_back({"", -1, nullptr, 0});
  info.frame_of.assign(graph.num_node_ids(), -1);
  // Child frames by (parent frame, frame_name).
  std::map<std::pair<int, std::string>, int> children;
  // Which node first put a node in its frame, for error messages.
  std::vector<const Node*> reached_from(graph.num_node_ids(), nullptr);
  std::deque<const Node*> queue;
  for (const Node* n : graph.nodes()) {
    if (n->in_edges().empty()) {
      info.frame_of[n->id()] = 0;
      queue.push_back(n);
    }
  }
  while (!queue.empty()) {
    const Node* n = queue.front();
    queue.pop_front();
    const int frame = info.frame_of[n->id()];
    int out_frame = frame;
    if (IsEnter(*n)) {
      std::string frame_name;
      TW_RETURN_IF_ERROR(AddErrorContext(n->GetAttr("frame_name", &frame_name),
                                         absl::StrCat("Enter '", n->name(), "'")));
      auto [it, added] =
          children.emplace(std::make_pair(frame, frame_name), static_cast<int>(info.frames.size()));
      if (added) info.frames.push_back({frame_name, frame, n, 0});
      out_frame = it->second;
      ++info.frames[out_frame].num_enters;
    } else if (IsExit(*n)) {
      out_frame = info.frames[frame].parent;
      if (out_frame < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Exit '", n->name(), "' is not inside a while loop: no Enter leads to it"));
      }
    }
    for (const Edge* e : n->out_edges()) {
      const Node* dst = e->dst();
      int& dst_frame = info.frame_of[dst->id()];
      if (dst_frame < 0) {
        dst_frame = out_frame;
        reached_from[dst->id()] = n;
        queue.push_back(dst);
      } else if (dst_frame != out_frame) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Node '", dst->name(), "' has inputs from different frames: '", n->name(),
            "' gives it a value in ", FrameLabel(info, out_frame), ", '",
            reached_from[dst->id()]->name(), "' in ", FrameLabel(info, dst_frame),
            ". A tensor enters a while loop through Enter and leaves it through Exit"));
      }
    }
  }
  for (const Node* n : graph.nodes()) {
    if (info.frame_of[n->id()] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Node '", n->name(), "' (", n->type_string(),
          ") can never run: it is on a cycle that no Enter leads into (a loop's "
          "NextIteration feeds a Merge whose other input must come through an Enter)"));
    }
  }
  return info;
}

}  // namespace towerflow
