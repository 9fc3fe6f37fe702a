#include "runtime/client_session.h"

#include "core/status_macros.h"
#include "core/tensor_proto_util.h"

namespace towerflow {

absl::StatusOr<Tensor> ClientSession::FeedValue::ToTensor(const Output& output) const {
  if (is_tensor_) return tensor_;
  TW_RETURN_IF_ERROR(literal_.status());
  const DataType want = BaseType(output.type());
  TensorProto proto = literal_.tensor();
  if (proto.dtype() != want) {
    absl::StatusOr<TensorProto> converted = ConvertTensorProto(proto, want);
    if (!converted.ok()) {
      return AddErrorContext(converted.status(), absl::StrCat("feed for '", output.name(), "'"));
    }
    proto = *std::move(converted);
  }
  return Tensor::FromProto(proto);
}

ClientSession::ClientSession(const Scope& scope, const SessionOptions& options) : scope_(scope) {
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options);
  if (session.ok()) {
    session_ = *std::move(session);
  } else {
    init_status_ = session.status();
  }
}

ClientSession::ClientSession(const Scope& scope, std::unique_ptr<Session> session)
    : scope_(scope), session_(std::move(session)) {
  if (session_ == nullptr)
    init_status_ = absl::InvalidArgumentError("ClientSession needs a session");
}

absl::Status ClientSession::MaybeExtendGraph() const {
  TW_RETURN_IF_ERROR(scope_.status());
  absl::MutexLock lock(&mu_);
  // Node ids only grow, so a graph with no id past the last Run's has no
  // new node, and the graph need not be exported again (TF's ClientSession
  // checks the same count).
  const int num_node_ids = scope_.graph()->num_node_ids();
  if (num_node_ids <= sent_node_ids_) return absl::OkStatus();
  GraphDef def;
  TW_RETURN_IF_ERROR(scope_.ToGraphDef(&def));
  GraphDef fresh;
  *fresh.mutable_versions() = def.versions();
  for (const NodeDef& n : def.node()) {
    if (!sent_.contains(n.name())) *fresh.add_node() = n;
  }
  if (fresh.node_size() == 0) {
    sent_node_ids_ = num_node_ids;
    return absl::OkStatus();
  }
  // Functions the new nodes may call (the session runs them).
  for (const FunctionDef& f : def.library().function()) {
    if (!sent_functions_.contains(f.signature().name())) {
      *fresh.mutable_library()->add_function() = f;
    }
  }
  TW_RETURN_IF_ERROR(session_->Extend(fresh));
  for (const NodeDef& n : fresh.node()) sent_.insert(n.name());
  sent_node_ids_ = num_node_ids;
  for (const FunctionDef& f : fresh.library().function()) {
    sent_functions_.insert(f.signature().name());
  }
  return absl::OkStatus();
}

absl::Status ClientSession::Run(const std::vector<Output>& fetch_outputs,
                                std::vector<Tensor>* outputs) const {
  return Run(FeedType{}, fetch_outputs, {}, outputs);
}

absl::Status ClientSession::Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                                std::vector<Tensor>* outputs) const {
  return Run(inputs, fetch_outputs, {}, outputs);
}

absl::Status ClientSession::Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                                const std::vector<Operation>& run_outputs,
                                std::vector<Tensor>* outputs) const {
  return Run(RunOptions(), inputs, fetch_outputs, run_outputs, outputs, nullptr);
}

absl::Status ClientSession::Run(const RunOptions& run_options, const FeedType& inputs,
                                const std::vector<Output>& fetch_outputs,
                                const std::vector<Operation>& run_outputs,
                                std::vector<Tensor>* outputs, RunMetadata* run_metadata) const {
  TW_RETURN_IF_ERROR(init_status_);
  TW_RETURN_IF_ERROR(MaybeExtendGraph());
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [output, value] : inputs) {
    TW_ASSIGN_OR_RETURN(Tensor t, value.ToTensor(output));
    feeds.emplace_back(output.name(), std::move(t));
  }
  std::vector<std::string> fetches, targets;
  for (const Output& o : fetch_outputs) fetches.push_back(o.name());
  for (const Operation& op : run_outputs) targets.push_back(op.name());
  return session_->Run(run_options, feeds, fetches, targets, outputs, run_metadata);
}

}  // namespace towerflow
