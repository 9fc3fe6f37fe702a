#include "train/warm_start.h"

#include <sys/stat.h>

#include <regex>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/tensor_bundle.h"
#include "ops/const_op.h"
#include "ops/gen/io_ops.h"
#include "ops/variables.h"
#include "train/checkpoint.h"

namespace towerflow {
namespace train {
namespace {

// "/" (the root) as the empty prefix.
std::string ScopePrefix(const std::string& s) { return s == "/" ? "" : s; }

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

absl::Status InitFromCheckpoint(const Scope& scope, const std::string& checkpoint,
                                const std::map<std::string, std::string>& assignment_map) {
  TW_RETURN_IF_ERROR(scope.status());
  std::string prefix = checkpoint;
  if (IsDirectory(checkpoint)) {
    TW_ASSIGN_OR_RETURN(prefix, LatestCheckpoint(checkpoint));
  }
  TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));

  // Variable -> checkpoint tensor, over every map entry.
  std::vector<std::pair<Variable, std::string>> chosen;
  const std::vector<Variable> variables = GetVariables(*scope.graph(), GraphKeys::kGlobalVariables);
  for (const auto& [ckpt, graph] : assignment_map) {
    const bool is_scope = absl::EndsWith(ckpt, "/") || absl::EndsWith(graph, "/");
    if (is_scope && (!absl::EndsWith(ckpt, "/") || !absl::EndsWith(graph, "/"))) {
      return absl::InvalidArgumentError(
          absl::StrCat("InitFromCheckpoint: '", ckpt, "' -> '", graph,
                       "' maps a scope to a single name; both must end with '/' or neither"));
    }
    size_t matched = 0;
    for (const Variable& v : variables) {
      std::string tensor;
      if (is_scope) {
        const std::string from = ScopePrefix(graph);
        if (!absl::StartsWith(v.name(), from)) continue;
        tensor = ScopePrefix(ckpt) + v.name().substr(from.size());
      } else if (v.name() == graph) {
        tensor = ckpt;
      } else {
        continue;
      }
      ++matched;
      chosen.emplace_back(v, tensor);
    }
    if (matched == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "InitFromCheckpoint: '", graph, "' names no variable of the graph (mapped from '", ckpt,
          "' of checkpoint ", prefix, ")"));
    }
  }

  const Scope cpu = scope.NewSubScope("checkpoint_initializer")
                        .WithNoControlDependencies()
                        .WithDevice("/device:CPU:0");
  for (const auto& [v, tensor] : chosen) {
    TW_ASSIGN_OR_RETURN(const BundleEntryProto* entry, reader->Lookup(tensor));
    const TensorShape shape = BundleReader::ShapeOf(*entry);
    if (entry->dtype() != v.dtype() || shape != v.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "InitFromCheckpoint: variable ", v.name(), " (", DataTypeString(v.dtype()), " ",
          v.shape().DebugString(), ") cannot start from tensor ", tensor, " of checkpoint ", prefix,
          " (", DataTypeString(entry->dtype()), " ", shape.DebugString(), ")"));
    }
    Tensor names(DT_STRING, TensorShape({1}));
    names.data<std::string>()[0] = tensor;
    Tensor slices(DT_STRING, TensorShape({1}));
    ops::RestoreV2 restore(cpu, ops::Const(cpu, prefix), ops::Const(cpu, names.AsProto()),
                           ops::Const(cpu, slices.AsProto()), {v.dtype()});
    TW_RETURN_IF_ERROR(scope.status());
    // The initializer (AssignVariableOp(handle, value)) now assigns the
    // checkpoint's tensor.
    Node* assign = v.initializer().node();
    const Edge* value = assign->input_edge(1);
    if (value == nullptr) {
      return absl::InternalError(absl::StrCat("the initializer of ", v.name(), " has no value"));
    }
    scope.graph()->RemoveEdge(value);
    TW_RETURN_IF_ERROR(scope.graph()->AddDataEdge(restore[0].node(), 0, assign, 1).status());
  }
  return absl::OkStatus();
}

absl::Status WarmStart(const Scope& scope, const WarmStartSettings& settings) {
  TW_RETURN_IF_ERROR(scope.status());
  std::regex pattern;
  try {
    pattern = std::regex(settings.vars_to_warm_start);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(absl::StrCat("vars_to_warm_start '",
                                                   settings.vars_to_warm_start,
                                                   "' is not a regular expression: ", e.what()));
  }
  std::map<std::string, std::string> assignment_map;  // checkpoint name -> variable
  for (const Variable& v : GetVariables(*scope.graph(), GraphKeys::kTrainableVariables)) {
    if (!std::regex_search(v.name(), pattern, std::regex_constants::match_continuous)) continue;
    auto prev = settings.var_name_to_prev_var_name.find(v.name());
    assignment_map[prev == settings.var_name_to_prev_var_name.end() ? v.name() : prev->second] =
        v.name();
  }
  if (assignment_map.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vars_to_warm_start '", settings.vars_to_warm_start, "' chooses no trainable variable"));
  }
  return InitFromCheckpoint(scope, settings.ckpt_to_initialize_from, assignment_map);
}

}  // namespace train
}  // namespace towerflow
