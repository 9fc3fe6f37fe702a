// towerflow: the command-line tool.
//
//   towerflow inspect GRAPH           report on a GraphDef (.pb or .pbtxt)
//   towerflow convert IN OUT          .pb <-> .pbtxt, by the file extensions
//   towerflow dot GRAPH [-o FILE] [--expand SCOPE]... [--full]
//                                     Graphviz picture (stdout without -o)
//   towerflow run GRAPH --feed NAME=JSON --fetch NAME --target NAME ...
//                                     run a graph (see tools/run.h)
//   towerflow checkpoint PREFIX|DIR [--tensor NAME]
//                                     list a checkpoint, print a tensor
//   towerflow saved_model show|run DIR ...
//                                     TF's saved_model_cli (tools/saved_model_cli.h)
//
// Errors print the Status and exit 1; usage errors exit 2.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/file_io.h"
#include "core/status_macros.h"
#include "graph/graph_io.h"
#include "tools/checkpoint.h"
#include "tools/dot.h"
#include "tools/inspect.h"
#include "tools/run.h"
#include "tools/saved_model_cli.h"

namespace towerflow {
namespace {

constexpr char kUsage[] =
    "usage:\n"
    "  towerflow inspect GRAPH         nodes, op histogram, placeholders, variables,\n"
    "                                  devices, sinks, unknown ops\n"
    "  towerflow convert IN OUT        GraphDef .pb <-> .pbtxt (by extension)\n"
    "  towerflow dot GRAPH [-o FILE] [--expand SCOPE]... [--full]\n"
    "                                  Graphviz picture: name scopes collapsed into\n"
    "                                  boxes (--expand opens one; --full draws every\n"
    "                                  node), devices as colours\n"
    "  towerflow run GRAPH --feed NAME=JSON[:dtype] ... --fetch NAME ... [--target NAME ...]\n"
    "                [--device_count CPU=2] [--json] [--trace FILE]\n"
    "                                  run a graph: targets in order, then the fetches\n"
    "  towerflow checkpoint PREFIX|DIR [--tensor NAME]\n"
    "                                  a checkpoint's tensors (a directory: its latest),\n"
    "                                  or one tensor's values\n"
    "  towerflow saved_model show DIR [--tag_set serve] [--signature_def KEY]\n"
    "                                  a SavedModel's tag-sets, signatures, inputs, outputs\n"
    "  towerflow saved_model run DIR --signature_def KEY --input KEY=JSON|@FILE ...\n"
    "                [--tag_set serve] [--json]\n"
    "                                  run a signature of a SavedModel\n";

absl::Status Inspect(const std::string& path) {
  TW_ASSIGN_OR_RETURN(GraphDef def, ReadGraphDef(path));
  std::cout << tools::InspectGraphDef(def, path);
  return absl::OkStatus();
}

absl::Status Convert(const std::string& in, const std::string& out) {
  TW_ASSIGN_OR_RETURN(GraphDef def, ReadGraphDef(in));
  TW_RETURN_IF_ERROR(WriteGraphDef(def, out));
  std::cout << "Wrote " << def.node_size() << " nodes to " << out << " ("
            << (IsTextProtoPath(out) ? "text" : "binary") << ")\n";
  return absl::OkStatus();
}

struct DotCommand {
  std::string path;
  std::string out;  // empty: stdout
  tools::DotOptions options;
};

// `args`: what follows "dot".
absl::StatusOr<DotCommand> ParseDotArgs(const std::vector<std::string>& args) {
  DotCommand command;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    if (args[i] == "--full") {
      command.options.full = true;
    } else if (args[i] == "-o" && has_value) {
      command.out = args[++i];
    } else if (args[i] == "--expand" && has_value) {
      command.options.expand.push_back(args[++i]);
    } else if (command.path.empty() && !absl::StartsWith(args[i], "-")) {
      command.path = args[i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown or incomplete argument '", args[i],
                                                     "' (-o FILE, --expand SCOPE, --full)"));
    }
  }
  if (command.path.empty()) return absl::InvalidArgumentError("no GRAPH file");
  return command;
}

absl::Status Dot(const DotCommand& command) {
  const std::string& out = command.out;
  TW_ASSIGN_OR_RETURN(GraphDef def, ReadGraphDef(command.path));
  const std::string dot = tools::DotFromGraphDef(def, command.options);
  if (out.empty()) {
    std::cout << dot;
    return absl::OkStatus();
  }
  TW_RETURN_IF_ERROR(WriteFileAtomically(out, dot));
  std::cout << "Wrote " << out << " (render: dot -Tsvg " << out << " -o graph.svg)\n";
  return absl::OkStatus();
}

int Main(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string& command = args[0];
  absl::Status status;
  if (command == "inspect" && args.size() == 2) {
    status = Inspect(args[1]);
  } else if (command == "convert" && args.size() == 3) {
    status = Convert(args[1], args[2]);
  } else if (command == "dot") {
    absl::StatusOr<DotCommand> dot =
        ParseDotArgs(std::vector<std::string>(args.begin() + 1, args.end()));
    if (!dot.ok()) {
      std::cerr << "towerflow dot: " << dot.status().message() << "\n" << kUsage;
      return 2;
    }
    status = Dot(*dot);
  } else if (command == "checkpoint" &&
             (args.size() == 2 || (args.size() == 4 && args[2] == "--tensor"))) {
    absl::StatusOr<std::string> printed =
        tools::DescribeCheckpoint(args[1], args.size() == 4 ? args[3] : "");
    if (printed.ok()) std::cout << *printed;
    status = printed.status();
  } else if (command == "saved_model") {
    absl::StatusOr<tools::SavedModelArgs> sm =
        tools::ParseSavedModelArgs(std::vector<std::string>(args.begin() + 1, args.end()));
    if (!sm.ok()) {
      std::cerr << "towerflow saved_model: " << sm.status().message() << "\n" << kUsage;
      return 2;
    }
    absl::StatusOr<std::string> printed = tools::SavedModelCommand(*sm);
    if (printed.ok()) std::cout << *printed;
    status = printed.status();
  } else if (command == "run") {
    absl::StatusOr<tools::RunCommand> run =
        tools::ParseRunArgs(std::vector<std::string>(args.begin() + 1, args.end()));
    if (!run.ok()) {
      std::cerr << "towerflow run: " << run.status().message() << "\n" << kUsage;
      return 2;
    }
    absl::StatusOr<std::string> printed = tools::RunGraph(*run);
    if (printed.ok()) std::cout << *printed;
    status = printed.status();
  } else {
    std::cerr << "towerflow: bad arguments for '" << command << "'\n" << kUsage;
    return 2;
  }
  if (!status.ok()) {
    std::cerr << "towerflow " << command << ": " << status << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  return towerflow::Main(std::vector<std::string>(argv + 1, argv + argc));
}
