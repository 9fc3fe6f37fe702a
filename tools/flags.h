// Command-line flags of Towerflow's programs: Abseil's flags library, with
// the conventions every program of the project keeps.
//
// A program defines its flags with ABSL_FLAG beside the code that reads
// them and parses its command line once, first thing in main():
//
//   ABSL_FLAG(std::string, model_dir, "/tmp/quadrants", "checkpoints and events");
//
//   int main(int argc, char** argv) {
//     const std::vector<std::string> args = towerflow::ParseCommandLine(
//         argc, argv, "train_quadrants: trains the quadrants model on two towers");
//     ... absl::GetFlag(FLAGS_model_dir) ...
//   }
//
// What every program then does:
//   --help, -h   prints the usage and every flag the program defines (Abseil's
//                own aside) with its default, and exits 0;
//   --version    prints VersionString() and exits 0;
//   a flag the program does not define, or a value that does not parse, is
//   an error: Abseil prints it and exits 1. Abseil's own flags work as
//   everywhere (--flagfile=FILE, --helpfull).
//
// A program with subcommands (the towerflow tool) parses each subcommand's
// arguments with ParseFlags against the flags that subcommand takes; there,
// flags that may be given several times (--feed a=1 --feed b=2) keep every
// value.
//
// Thread safety: flags are process-wide. Parse before starting threads;
// reading them (absl::GetFlag) is thread-safe.
#ifndef TOWERFLOW_TOOLS_FLAGS_H_
#define TOWERFLOW_TOOLS_FLAGS_H_

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace towerflow {

// The programs' parse (see the file comment). Returns the positional
// arguments, argv[0] excluded, in order. `usage` opens --help: what the
// program does and its synopsis. Does not return after --help, -h,
// --version or a bad flag.
std::vector<std::string> ParseCommandLine(int argc, char** argv, absl::string_view usage);

// "towerflow <version>", the GraphDef version it writes and whether CUDA is
// built in; one line each.
std::string VersionString();

// The flags one command takes: the names of ABSL_FLAGs. Those in `repeated`
// (flags of type std::vector<std::string>, each named in `names` too) keep
// one value per occurrence, commas and all: `--feed x=[1,2] --feed y=3` is
// {"x=[1,2]", "y=3"}, where Abseil would keep the last occurrence and split
// it at commas.
struct FlagSet {
  std::vector<std::string> names;
  std::vector<absl::Flag<std::vector<std::string>>*> repeated;
};

struct ParsedArgs {
  std::vector<std::string> positional;  // in order, the flags taken out
  bool help = false;                    // --help or -h was among the flags
};

// Sets the flags of `set` from `args` (what follows the program's name, or
// its subcommand): --name=value, --name value, one dash or two; booleans as
// --name, --noname or --name=true|false; "--" ends the flags. A flag of
// `set` that is not given gets its default back, so each call starts from
// the defaults.
// Errors (InvalidArgument) name the argument: a flag not in `set` (with the
// nearest name in `set` when one is close), a flag without its value, a
// value its type does not parse. Internal when a name in `set` has no
// ABSL_FLAG linked in: the program's own mistake. On error the flags are
// left partly set.
absl::StatusOr<ParsedArgs> ParseFlags(const std::vector<std::string>& args, const FlagSet& set);

// --help's list of the flags of `set`, sorted by name, two lines a flag:
//   --batch_size=INT (default: 128)
//       examples per tower per step
// A repeated flag says so; a one-letter flag shows one dash (-o FILE).
std::string FlagsHelp(const FlagSet& set);

// The flags the program defines: every ABSL_FLAG linked in, Abseil's own
// aside, sorted.
std::vector<std::string> ProgramFlagNames();

}  // namespace towerflow

#endif  // TOWERFLOW_TOOLS_FLAGS_H_
