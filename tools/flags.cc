#include "tools/flags.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "graph/graph.h"

namespace towerflow {
namespace {

// Semantic versioning; "-dev" until the first release.
constexpr char kVersion[] = "0.1.0-dev";

// Abseil's own flags (--flagfile, --undefok, ...) are defined in its files.
bool IsAbseilFlag(const absl::CommandLineFlag& flag) {
  return absl::StrContains(flag.Filename(), "absl/flags/");
}

std::string Dashes(absl::string_view name) { return name.size() == 1 ? "-" : "--"; }

// What a flag's value looks like in --help; empty for booleans.
std::string Placeholder(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<bool>()) return "";
  if (flag.IsOfType<int32_t>() || flag.IsOfType<int64_t>() || flag.IsOfType<uint64_t>()) {
    return "INT";
  }
  if (flag.IsOfType<double>() || flag.IsOfType<float>()) return "NUMBER";
  if (flag.IsOfType<std::vector<std::string>>()) return "A,B,...";
  return "VALUE";
}

std::string DefaultText(const absl::CommandLineFlag& flag) {
  const std::string value = flag.DefaultValue();
  if (flag.IsOfType<std::string>()) return absl::StrCat("\"", value, "\"");
  if (flag.IsOfType<std::vector<std::string>>() && value.empty()) return "none";
  return value;
}

// `text` in lines of at most `width` characters where its words allow,
// each line after the first opening with `indent`; its own line breaks kept.
std::string Wrap(absl::string_view text, size_t width, absl::string_view indent) {
  std::string out;
  size_t line = 0;  // characters on the current line
  for (absl::string_view paragraph : absl::StrSplit(text, '\n')) {
    if (!out.empty()) absl::StrAppend(&out, "\n", indent), line = 0;
    for (absl::string_view word : absl::StrSplit(paragraph, ' ', absl::SkipEmpty())) {
      if (line > 0 && line + 1 + word.size() > width) {
        absl::StrAppend(&out, "\n", indent);
        line = 0;
      }
      if (line > 0) out += ' ', ++line;
      absl::StrAppend(&out, word);
      line += word.size();
    }
  }
  return out;
}

// Levenshtein distance, for "did you mean".
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

absl::Status UnknownFlag(absl::string_view arg, absl::string_view name, const FlagSet& set) {
  std::string nearest;
  size_t best = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::string& candidate : set.names) {
    const size_t d = EditDistance(name, candidate);
    if (d < best) best = d, nearest = candidate;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown flag '", arg, "'",
      nearest.empty() ? "" : absl::StrCat(" (did you mean ", Dashes(nearest), nearest, "?)")));
}

// The flag of `set` that `name` sets, and the value a bare boolean means
// ("--json" true, "--nojson" false). nullptr when `set` has none.
absl::CommandLineFlag* Locate(absl::string_view name, const FlagSet& set, std::string* bare_value) {
  const auto in_set = [&set](absl::string_view n) {
    return std::find(set.names.begin(), set.names.end(), n) != set.names.end();
  };
  if (in_set(name)) {
    *bare_value = "true";
    return absl::FindCommandLineFlag(name);
  }
  if (absl::ConsumePrefix(&name, "no") && in_set(name)) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag != nullptr && flag->IsOfType<bool>()) {
      *bare_value = "false";
      return flag;
    }
  }
  return nullptr;
}

}  // namespace

std::string VersionString() {
#ifdef TOWERFLOW_CUDA
  constexpr char kCuda[] = "CUDA: built in (GPUs are used where present)";
#else
  constexpr char kCuda[] = "CUDA: not built in (bazel build --config=cuda builds it)";
#endif
  return absl::StrCat("towerflow ", kVersion, "\nGraphDef version ", kGraphDefVersion,
                      " (TensorFlow 1.x graphs)\n", kCuda, "\n");
}

std::vector<std::string> ProgramFlagNames() {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!flag->IsRetired() && !IsAbseilFlag(*flag)) names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string FlagsHelp(const FlagSet& set) {
  std::vector<std::string> names = set.names;
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& name : names) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;
    const bool repeated = std::any_of(
        set.repeated.begin(), set.repeated.end(),
        [&name](const auto* f) { return absl::GetFlagReflectionHandle(*f).Name() == name; });
    std::string placeholder = repeated ? "VALUE" : Placeholder(*flag);
    if (!placeholder.empty()) placeholder = absl::StrCat(name.size() == 1 ? " " : "=", placeholder);
    absl::StrAppend(
        &out, "  ", Dashes(name), name, placeholder,
        repeated ? " (repeatable)" : absl::StrCat(" (default: ", DefaultText(*flag), ")"),
        "\n      ", Wrap(flag->Help(), 74, "      "), "\n");
  }
  return out;
}

absl::StatusOr<ParsedArgs> ParseFlags(const std::vector<std::string>& args, const FlagSet& set) {
  // Every flag of the set starts from its default.
  for (const std::string& name : set.names) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) {
      return absl::InternalError(
          absl::StrCat("the program takes --", name, " but defines no such flag"));
    }
    std::string error;
    if (!flag->ParseFrom(flag->DefaultValue(), &error)) {
      return absl::InternalError(absl::StrCat("--", name, "'s default does not parse: ", error));
    }
  }
  std::map<std::string, std::vector<std::string>> repeated_values;
  for (auto* f : set.repeated)
    repeated_values[std::string(absl::GetFlagReflectionHandle(*f).Name())];

  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") {
      parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    absl::string_view body = arg;
    if (!absl::ConsumePrefix(&body, "-") || body.empty()) {
      parsed.positional.emplace_back(arg);
      continue;
    }
    absl::ConsumePrefix(&body, "-");
    const size_t eq = body.find('=');
    const absl::string_view name = body.substr(0, eq);
    if (name == "help" || name == "h") {
      parsed.help = true;
      continue;
    }
    std::string value;
    absl::CommandLineFlag* flag = Locate(name, set, &value);
    if (flag == nullptr) return UnknownFlag(arg, name, set);
    const std::string flag_name(flag->Name());
    if (eq != absl::string_view::npos) {
      if (value == "false") {  // --nojson=...
        return absl::InvalidArgumentError(
            absl::StrCat("'", arg, "': --no", flag_name, " takes no value"));
      }
      value = std::string(body.substr(eq + 1));
    } else if (!flag->IsOfType<bool>()) {
      if (i + 1 >= args.size() || absl::StartsWith(args[i + 1], "--")) {
        return absl::InvalidArgumentError(absl::StrCat(arg, " needs a value"));
      }
      value = args[++i];
    }
    auto repeated = repeated_values.find(flag_name);
    if (repeated != repeated_values.end()) {
      repeated->second.push_back(value);
      continue;
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Dashes(flag_name), flag_name, "=", value, ": ", error));
    }
  }
  for (auto* f : set.repeated) {
    absl::SetFlag(f, repeated_values[std::string(absl::GetFlagReflectionHandle(*f).Name())]);
  }
  return parsed;
}

std::vector<std::string> ParseCommandLine(int argc, char** argv, absl::string_view usage) {
  absl::SetProgramUsageMessage(usage);
  absl::FlagsUsageConfig config;
  const auto ours = [](absl::string_view filename) {
    return !absl::StrContains(filename, "absl/flags/");
  };
  config.contains_helpshort_flags = ours;
  config.contains_help_flags = ours;
  config.contains_helppackage_flags = ours;
  config.version_string = VersionString;
  absl::SetFlagsUsageConfig(config);
  // --help is answered here: Abseil's exits 1, and -h is not its flag.
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      std::cout << usage << "\n\nFlags:\n"
                << FlagsHelp({ProgramFlagNames(), {}})
                << "  --help, -h: this help; --version: Towerflow's version;\n"
                   "  --helpfull: Abseil's flags too (--flagfile=FILE reads flags from a file)\n";
      std::exit(0);
    }
  }
  const std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  return std::vector<std::string>(rest.begin() + 1, rest.end());
}

}  // namespace towerflow
