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
//   towerflow --version, towerflow --help, towerflow COMMAND --help
//
// Flags are Abseil flags (tools/flags.h), each command taking its own.
// Exit status: 0 done, 1 the command failed (its Status is printed), 2 a
// usage error (a flag the command does not take, a missing argument).
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/file_io.h"
#include "core/status_macros.h"
#include "graph/graph_io.h"
#include "tools/checkpoint.h"
#include "tools/dot.h"
#include "tools/flags.h"
#include "tools/inspect.h"
#include "tools/run.h"
#include "tools/saved_model_cli.h"

ABSL_FLAG(std::string, o, "", "write the picture to this file (default: standard output)");
ABSL_FLAG(std::vector<std::string>, expand, {},
          "open this name scope: its sub-scopes become boxes and its ops show");
ABSL_FLAG(bool, full, false, "draw every node, name scopes as nested clusters");
ABSL_FLAG(std::vector<std::string>, feed, {},
          "NAME=JSON, NAME=JSON:dtype, NAME=@FILE.json or NAME=@FILE.npy: a value to feed");
ABSL_FLAG(std::vector<std::string>, fetch, {}, "a tensor to print: NAME or NAME:INDEX");
ABSL_FLAG(std::vector<std::string>, target, {},
          "an op to run first, in order, each in a run of its own");
ABSL_FLAG(bool, queue_runners, false,
          "start the queue runners of a MetaGraphDef (.meta) after the targets, as "
          "tf.compat.v1.train.start_queue_runners");
ABSL_FLAG(std::vector<std::string>, device_count, {},
          "TYPE=N: N devices of TYPE (CPU=2 makes two virtual CPUs)");
ABSL_FLAG(std::string, trace, "", "write a Chrome trace of the fetching run to this file");
ABSL_FLAG(bool, json, false, "print the results as one JSON object");
ABSL_FLAG(int64_t, max_output_elements, 10'000'000,
          "run: refuse to print a fetched tensor of more elements (its text takes tens of "
          "bytes an element)");
ABSL_FLAG(std::string, tensor, "", "print this tensor's values too");
ABSL_FLAG(std::vector<std::string>, tag_set, {},
          "the MetaGraph's tags, comma-separated (without it, show lists the tag-sets "
          "and run takes 'serve')");
ABSL_FLAG(std::string, signature_def, "", "the signature's key (serving_default)");
ABSL_FLAG(std::vector<std::string>, input, {},
          "KEY=JSON, KEY=@FILE.json or KEY=@FILE.npy: a value for the signature's input KEY");
ABSL_FLAG(std::vector<std::string>, input_examples, {},
          "KEY=JSON or KEY=@FILE: tf.Examples for input KEY, a JSON list of objects of "
          "feature lists ([{\"x\": [1.0]}])");

namespace towerflow {
namespace {

struct Command {
  std::string name;      // "run", "saved_model show"
  std::string synopsis;  // what follows the name
  std::string summary;   // for the tool's --help
  std::string details;   // for the command's --help
  FlagSet flags;
  size_t num_args = 0;  // positional arguments after the name
  // Runs the command on its positional arguments, the flags parsed:
  // what it prints, or its error.
  std::function<absl::StatusOr<std::string>(const std::vector<std::string>&)> run;
  // The flags' usage errors that their types do not catch; none when empty.
  std::function<absl::Status()> check_flags;
};

absl::Status CheckRunFlags() {
  if (absl::GetFlag(FLAGS_fetch).empty() && absl::GetFlag(FLAGS_target).empty()) {
    return absl::InvalidArgumentError("needs at least one --fetch or --target");
  }
  return tools::ParseDeviceCount(absl::GetFlag(FLAGS_device_count)).status();
}

absl::Status CheckSavedModelRunFlags() {
  if (absl::GetFlag(FLAGS_signature_def).empty()) {
    return absl::InvalidArgumentError("needs --signature_def");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Inspect(const std::vector<std::string>& args) {
  TW_ASSIGN_OR_RETURN(GraphDef def, ReadGraphDef(args[0]));
  return tools::InspectGraphDef(def, args[0]);
}

absl::StatusOr<std::string> Convert(const std::vector<std::string>& args) {
  TW_ASSIGN_OR_RETURN(GraphDef def, ReadGraphDef(args[0]));
  TW_RETURN_IF_ERROR(WriteGraphDef(def, args[1]));
  return absl::StrCat("Wrote ", def.node_size(), " nodes to ", args[1], " (",
                      IsTextProtoPath(args[1]) ? "text" : "binary", ")\n");
}

absl::StatusOr<std::string> Dot(const std::vector<std::string>& args) {
  TW_ASSIGN_OR_RETURN(GraphDef def, ReadGraphDef(args[0]));
  tools::DotOptions options;
  options.full = absl::GetFlag(FLAGS_full);
  options.expand = absl::GetFlag(FLAGS_expand);
  const std::string dot = tools::DotFromGraphDef(def, options);
  const std::string out = absl::GetFlag(FLAGS_o);
  if (out.empty()) return dot;
  TW_RETURN_IF_ERROR(WriteFileAtomically(out, dot));
  return absl::StrCat("Wrote ", out, " (render: dot -Tsvg ", out, " -o graph.svg)\n");
}

absl::StatusOr<std::string> Run(const std::vector<std::string>& args) {
  tools::RunCommand command;
  command.graph_path = args[0];
  command.feeds = absl::GetFlag(FLAGS_feed);
  command.fetches = absl::GetFlag(FLAGS_fetch);
  command.targets = absl::GetFlag(FLAGS_target);
  command.queue_runners = absl::GetFlag(FLAGS_queue_runners);
  TW_ASSIGN_OR_RETURN(command.device_count,
                      tools::ParseDeviceCount(absl::GetFlag(FLAGS_device_count)));
  command.json = absl::GetFlag(FLAGS_json);
  command.trace_path = absl::GetFlag(FLAGS_trace);
  command.max_output_elements = absl::GetFlag(FLAGS_max_output_elements);
  // The values go to stdout as they are formatted, not through one string.
  command.out = &std::cout;
  return tools::RunGraph(command);
}

absl::StatusOr<std::string> Checkpoint(const std::vector<std::string>& args) {
  return tools::DescribeCheckpoint(args[0], absl::GetFlag(FLAGS_tensor));
}

std::function<absl::StatusOr<std::string>(const std::vector<std::string>&)> SavedModel(
    const std::string& verb) {
  return [verb](const std::vector<std::string>& args) {
    tools::SavedModelArgs a;
    a.verb = verb;
    a.dir = args[0];
    for (const std::string& tag : absl::GetFlag(FLAGS_tag_set)) {
      if (!tag.empty()) a.tags.insert(tag);
    }
    a.signature = absl::GetFlag(FLAGS_signature_def);
    a.inputs = absl::GetFlag(FLAGS_input);
    a.input_examples = absl::GetFlag(FLAGS_input_examples);
    a.json = absl::GetFlag(FLAGS_json);
    return tools::SavedModelCommand(a);
  };
}

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {"inspect",
       "GRAPH",
       "nodes, op histogram, placeholders, variables, devices, sinks",
       "Reports on a GraphDef (.pb binary or .pbtxt text): node count, op histogram,\n"
       "placeholders, variables, devices, sinks and ops Towerflow does not know.",
       {},
       1,
       Inspect},
      {"convert",
       "IN OUT",
       "GraphDef .pb <-> .pbtxt, by the files' extensions",
       "Reads a GraphDef and writes it as text (.pbtxt) or binary (any other extension).",
       {},
       2,
       Convert},
      {"dot",
       "GRAPH",
       "a Graphviz picture: name scopes as boxes, devices as colours",
       "Draws a GraphDef for Graphviz (dot -Tsvg graph.dot -o graph.svg): name scopes\n"
       "collapsed into boxes as TensorBoard's graph view (a box per tower, the input\n"
       "split, the gradient aggregation, the variables on their device), the edges\n"
       "between boxes with the tensors and bytes that cross them, devices as colours.",
       {{"o", "expand", "full"}, {&FLAGS_expand}},
       1,
       Dot},
      {"run",
       "GRAPH",
       "runs a graph: feeds JSON values, runs targets, prints fetches",
       "Runs a GraphDef: the --target ops one by one in order, then one run that\n"
       "fetches every --fetch and prints it. Feeds take their dtype from the fed node\n"
       "unless a :dtype suffix says it. Soft placement is on: graphs built for GPUs run\n"
       "on the CPU. A .meta file is a MetaGraphDef: --queue_runners starts its queue\n"
       "runners (TF 1 input pipelines) after the targets, and stops them after the fetches.",
       {{"feed", "fetch", "target", "queue_runners", "device_count", "trace", "json",
         "max_output_elements"},
        {&FLAGS_feed, &FLAGS_fetch, &FLAGS_target, &FLAGS_device_count}},
       1,
       Run,
       CheckRunFlags},
      {"checkpoint",
       "PREFIX|DIR",
       "a checkpoint's tensors, or one tensor's values",
       "Lists a TensorFlow V2 checkpoint's tensors (name, dtype, shape, bytes), as TF's\n"
       "inspect_checkpoint: a prefix (model.ckpt-200), its .index file, or a model\n"
       "directory (its latest checkpoint).",
       {{"tensor"}, {}},
       1,
       Checkpoint},
      {"saved_model show",
       "DIR",
       "a SavedModel's tag-sets, signatures, inputs, outputs",
       "As TF's saved_model_cli show: the tag-sets, then with --tag_set the signatures,\n"
       "then with --signature_def its method, inputs and outputs.",
       {{"tag_set", "signature_def"}, {}},
       1,
       SavedModel("show")},
      {"saved_model run",
       "DIR --signature_def KEY",
       "runs a signature of a SavedModel",
       "As TF's saved_model_cli run: loads the SavedModel, feeds the signature's inputs\n"
       "by key and prints every output.",
       {{"tag_set", "signature_def", "input", "input_examples", "json"},
        {&FLAGS_input, &FLAGS_input_examples}},
       1,
       SavedModel("run"),
       CheckSavedModelRunFlags},
  };
  return *commands;
}

std::string ToolHelp() {
  std::string out =
      "towerflow: TensorFlow graphs, checkpoints and SavedModels from the command line.\n\n"
      "usage: towerflow COMMAND ARGS [FLAGS]\n\ncommands:\n";
  for (const Command& c : Commands()) {
    const std::string head = absl::StrCat(c.name, " ", c.synopsis);
    constexpr size_t kColumn = 34;  // where the summaries start, after two spaces
    absl::StrAppend(&out, "  ", head,
                    head.size() < kColumn ? std::string(kColumn - head.size(), ' ')
                                          : "\n" + std::string(kColumn + 2, ' '),
                    c.summary, "\n");
  }
  absl::StrAppend(&out,
                  "\n'towerflow COMMAND --help' lists a command's flags; "
                  "'towerflow --version' prints the version.\n");
  return out;
}

std::string CommandHelp(const Command& c) {
  return absl::StrCat("usage: towerflow ", c.name, " ", c.synopsis,
                      c.flags.names.empty() ? "" : " [FLAGS]", "\n\n", c.details, "\n",
                      c.flags.names.empty() ? "" : absl::StrCat("\nflags:\n", FlagsHelp(c.flags)));
}

// The command that `args` names ("saved_model run" takes two words), and
// how many words it took; nullptr when none.
const Command* FindCommand(const std::vector<std::string>& args, size_t* words) {
  const std::string two_words = args.size() > 1 ? absl::StrCat(args[0], " ", args[1]) : "";
  for (const Command& c : Commands()) {
    if (c.name == args[0] || c.name == two_words) {
      *words = c.name == args[0] ? 1 : 2;
      return &c;
    }
  }
  return nullptr;
}

int UsageError(const std::string& message, const std::string& command) {
  std::cerr << "towerflow" << (command.empty() ? "" : " ") << command << ": " << message
            << "\n('towerflow " << (command.empty() ? "--help" : command + " --help")
            << "' says how to use it)\n";
  return 2;
}

int Main(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << ToolHelp();
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || (args[0] == "help" && args.size() == 1)) {
    std::cout << ToolHelp();
    return 0;
  }
  if (args[0] == "help") {  // help COMMAND: as COMMAND --help
    std::vector<std::string> rest(args.begin() + 1, args.end());
    rest.push_back("--help");
    return Main(rest);
  }
  if (args[0] == "--version") {
    std::cout << VersionString();
    return 0;
  }
  size_t words = 0;
  const Command* command = FindCommand(args, &words);
  if (command == nullptr) {
    if (args[0] == "saved_model") {
      if (args.size() > 1 && (args[1] == "--help" || args[1] == "-h")) {
        for (const Command& c : Commands()) {
          if (absl::StartsWith(c.name, "saved_model ")) std::cout << CommandHelp(c) << "\n";
        }
        return 0;
      }
      return UsageError("needs 'show DIR' or 'run DIR'", "saved_model");
    }
    return UsageError(absl::StrCat("no command '", args[0], "'"), "");
  }
  absl::StatusOr<ParsedArgs> parsed =
      ParseFlags(std::vector<std::string>(args.begin() + words, args.end()), command->flags);
  if (!parsed.ok()) return UsageError(std::string(parsed.status().message()), command->name);
  if (parsed->help) {
    std::cout << CommandHelp(*command);
    return 0;
  }
  const std::vector<std::string>& positional = parsed->positional;
  if (positional.size() != command->num_args) {
    return UsageError(
        absl::StrCat("takes ", command->synopsis, ", not '", absl::StrJoin(positional, " "), "'"),
        command->name);
  }
  if (command->check_flags) {
    const absl::Status checked = command->check_flags();
    if (!checked.ok()) return UsageError(std::string(checked.message()), command->name);
  }
  absl::StatusOr<std::string> printed = command->run(positional);
  if (!printed.ok()) {
    std::cerr << "towerflow " << command->name << ": " << printed.status() << "\n";
    return 1;
  }
  std::cout << *printed;
  return 0;
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  return towerflow::Main(std::vector<std::string>(argv + 1, argv + argc));
}
