#include "training/cluster_roles.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "training/hooks.h"

namespace towerflow {
namespace training {

absl::StatusOr<ProcessRole> RoleOf(bool across_processes, distribute::Server* server) {
  ProcessRole role;
  role.server = server;
  if (server != nullptr) {
    role.chief = server->is_chief();
    return role;
  }
  if (!across_processes) return role;
  TW_ASSIGN_OR_RETURN(distribute::Cluster * cluster, distribute::Cluster::Get());
  if (cluster->size() > 1) role.cluster = cluster;
  role.chief = cluster->is_chief();
  return role;
}

absl::StatusOr<bool> EveryProcess(distribute::Cluster* cluster, bool mine) {
  if (cluster == nullptr) return mine;
  return cluster->EveryProcess(mine);
}

absl::StatusOr<bool> RankZeroDecides(distribute::Cluster* cluster, bool mine) {
  if (cluster == nullptr) return mine;
  Tensor flag(DT_INT32, TensorShape({1}));
  flag.data<int32_t>()[0] = mine ? 1 : 0;
  TW_RETURN_IF_ERROR(cluster->Broadcast(&flag, 0));
  return flag.data<int32_t>()[0] != 0;
}

absl::StatusOr<std::optional<int64_t>> StepTogether(distribute::Cluster* cluster, bool go_on,
                                                    int64_t examples) {
  if (cluster != nullptr) {
    Tensor votes(DT_INT64, TensorShape({2}));  // processes going on, examples
    votes.data<int64_t>()[0] = go_on ? 1 : 0;
    votes.data<int64_t>()[1] = go_on ? examples : 0;
    TW_RETURN_IF_ERROR(cluster->AllReduceSum(&votes));
    go_on = votes.data<int64_t>()[0] == cluster->size();
    examples = votes.data<int64_t>()[1];
  }
  if (!go_on) return std::nullopt;
  return examples;
}

absl::Status MeanOverProcesses(distribute::Cluster* cluster, int64_t examples,
                               std::vector<double>* values) {
  if (cluster == nullptr || values->empty()) return absl::OkStatus();
  // Each value times this process's examples, then the examples, summed
  // over the processes.
  const int64_t n = static_cast<int64_t>(values->size());
  Tensor sums(DT_DOUBLE, TensorShape({n + 1}));
  double* v = sums.data<double>();
  for (int64_t i = 0; i < n; ++i) {
    v[i] = examples == 0 ? 0.0 : (*values)[i] * static_cast<double>(examples);
  }
  v[n] = static_cast<double>(examples);
  TW_RETURN_IF_ERROR(cluster->AllReduceSum(&sums));
  const double all = v[n];
  for (int64_t i = 0; i < n; ++i) (*values)[i] = all > 0 ? v[i] / all : 0.0;
  return absl::OkStatus();
}

absl::Status CheckNoCollectiveAcrossProcesses(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    const std::string& op = node->type_string();
    if (op == "MpiAllReduce" || op == "MpiAllGather" || op == "MpiBroadcast") {
      return absl::InvalidArgumentError(absl::StrCat(
          "RunConfig.server: node '", node->name(), "' (", op,
          ") needs every process of the job, but the ps tasks take part in no collective; "
          "replicate with ReplicateOptions::across_processes = false"));
    }
  }
  return absl::OkStatus();
}

absl::Status StartSession(const ClientSession& session, const ProcessRole& role,
                          const SessionStart& start, std::ostream& log) {
  if (start.ready.has_value() && !role.chief) {
    // TF's SessionManager.wait_for_session: the chief initializes them.
    TW_RETURN_IF_ERROR(session.ExtendGraph());
    TW_RETURN_IF_ERROR(
        train::WaitForVariables(session.session(), *start.ready, start.wait_for_variables));
  } else {
    // The chief of a parameter-server job restores without initializing
    // first (TF's Scaffold): the Saver holds every global variable.
    if (!start.checkpoint.has_value() || role.server == nullptr) {
      TW_RETURN_IF_ERROR(session.Run({}, {}, {start.init_global}, nullptr));
    }
    if (start.checkpoint.has_value()) {
      if (start.saver == nullptr) {
        return absl::InvalidArgumentError("StartSession: a checkpoint to restore but no Saver");
      }
      log << LogTimestamp() << ": Restoring parameters from " << *start.checkpoint << "\n";
      TW_RETURN_IF_ERROR(start.saver->Restore(session, *start.checkpoint));
    }
  }
  if (start.broadcast.has_value()) {
    TW_RETURN_IF_ERROR(session.Run({}, {}, {*start.broadcast}, nullptr));
  }
  return session.Run({}, {}, {start.init_local}, nullptr);
}

}  // namespace training
}  // namespace towerflow
