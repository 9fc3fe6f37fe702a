#include "testing/session_testing.h"

#include <utility>

#include "core/proto_io.h"
#include "core/status_macros.h"

namespace towerflow {

absl::StatusOr<std::unique_ptr<Session>> MakeSession(const GraphDef& graph,
                                                     const SessionOptions& options) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  TW_RETURN_IF_ERROR(session->Create(graph));
  return session;
}

absl::StatusOr<std::unique_ptr<Session>> MakeSession(absl::string_view graph_text,
                                                     const SessionOptions& options) {
  GraphDef graph;
  TW_RETURN_IF_ERROR(ParseTextProto(graph_text, &graph));
  return MakeSession(graph, options);
}

}  // namespace towerflow
