// A Session created on a GraphDef, for tests that run graphs without a
// Scope:
//
//   TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(graph_def));
//   TW_ASSERT_OK_AND_ASSIGN(auto s, MakeSession(R"pb(node { ... })pb", options));
#ifndef TOWERFLOW_TESTING_SESSION_TESTING_H_
#define TOWERFLOW_TESTING_SESSION_TESTING_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/graph.pb.h"
#include "runtime/session.h"

namespace towerflow {

// A new session with `options`, created on `graph`: NewSession's or
// Create's error otherwise.
absl::StatusOr<std::unique_ptr<Session>> MakeSession(const GraphDef& graph,
                                                     const SessionOptions& options = {});

// As above, for a GraphDef in text format; InvalidArgument (with the parser's
// line and column) when `graph_text` does not parse.
absl::StatusOr<std::unique_ptr<Session>> MakeSession(absl::string_view graph_text,
                                                     const SessionOptions& options = {});

}  // namespace towerflow

#endif  // TOWERFLOW_TESTING_SESSION_TESTING_H_
