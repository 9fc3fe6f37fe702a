// The plain program around a fuzz target (when libFuzzer is not linked):
// replays inputs and fuzzes by mutation.
//
//   graph_fuzz [FLAGS] [FILE|DIR]...
//
// Replays the target's seeds (unless --no_seeds) and every FILE and every
// file under DIR, then, with --runs or --seconds, mutates them: bit flips,
// byte and number substitutions (including the integers that broke
// TensorFlow: 2^31, 2^32, 2^62, -1...), insertions, erasures and splices;
// for a target with a structure-aware mutation, half the mutants are its
// (fields of a parsed protobuf changed, TFRecords reframed with valid CRCs:
// fuzz/mutator.h).
// Without coverage instrumentation the signal that keeps a mutant in the
// corpus is a status no input gave before (its code and message, digits
// aside): new errors mean new paths through the checks.
//
// A crash (signal or sanitizer report) or an input running past --timeout_s
// writes the input to <artifact_prefix>crash-<target>-<n> or timeout-...
// and exits non-zero; the last line says how many executions ran.
//
// Flags (Abseil's; --help lists them): --runs, --seconds, --seed, --max_len,
// --timeout_s, --artifact_prefix, --malloc_limit_mb, --no_seeds, --verbose.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_target.h"
#include "google/protobuf/stubs/logging.h"
#include "tools/flags.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TW_FUZZ_SANITIZED 1
#endif

extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

#ifdef TW_FUZZ_SANITIZED
// Sanitizer defaults of a fuzzing process: big allocations fail (and become
// ResourceExhausted) instead of aborting; the process's memory is limited as
// --malloc_limit_mb's default limits an unsanitized one (RLIMIT_AS cannot
// be used under ASan, whose shadow memory is terabytes of address space: a
// resident size past 4096 MB is a report, so an input that makes memory
// grow outside the sessions' budgets is found); undefined behaviour is
// fatal; a report ends in abort(), whose SIGABRT handler writes the input
// (GCC's UBSan runtime is a library of its own, which the death callback set
// through ASan's does not reach).
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=2048:hard_rss_limit_mb=4096:"
         "detect_leaks=0:abort_on_error=1";
}
extern "C" const char* __ubsan_default_options() {
  return "print_stacktrace=1:halt_on_error=1:abort_on_error=1";
}
#endif

ABSL_FLAG(int64_t, runs, 0, "mutants to run after the replay (0: none unless --seconds)");
ABSL_FLAG(double, seconds, 0, "mutate for this many seconds after the replay (0: none)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the mutations");
ABSL_FLAG(size_t, max_len, 4096,
          "bytes mutants grow to (those of a larger input keep at most its size); at most 1 MiB");
ABSL_FLAG(unsigned, timeout_s, 20, "an input running longer is a timeout artifact");
ABSL_FLAG(std::string, artifact_prefix, "./",
          "where crash-<target>-<n> and timeout-<target>-<n> are written");
ABSL_FLAG(int64_t, malloc_limit_mb, 4096,
          "RLIMIT_AS where no sanitizer runs, so allocations past it fail cleanly (0: none); "
          "under ASan the limit is its hard_rss_limit_mb=4096");
ABSL_FLAG(bool, no_seeds, false, "skip the target's own seeds");
ABSL_FLAG(bool, verbose, false, "print each replayed input's status");

namespace towerflow {
namespace fuzz {
namespace {

// The input being run, for the signal handlers (written before each run).
const char* g_current = nullptr;
size_t g_current_size = 0;
char g_crash_path[4096];
char g_timeout_path[4096];

// Async-signal-safe: open, write, close.
void DumpCurrent(const char* path, const char* what) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    size_t done = 0;
    while (done < g_current_size) {
      const ssize_t n = write(fd, g_current + done, g_current_size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fd);
  }
  const char* parts[] = {"==fuzz== ", what, ": the input is in ", path, "\n"};
  for (const char* p : parts) {
    ssize_t ignored = write(STDERR_FILENO, p, std::strlen(p));
    (void)ignored;
  }
}

void OnCrashSignal(int sig) {
  DumpCurrent(g_crash_path, "crash");
  signal(sig, SIG_DFL);
  raise(sig);
}

void OnSanitizerDeath() { DumpCurrent(g_crash_path, "sanitizer report"); }

void OnTimeout(int) {
  DumpCurrent(g_timeout_path, "timeout");
  _exit(70);
}

struct Flags {
  int64_t runs = 0;
  double seconds = 0;
  uint64_t seed = 1;
  size_t max_len = 4096;
  unsigned timeout_s = 20;
  std::string artifact_prefix = "./";
  int64_t malloc_limit_mb = 4096;
  bool seeds = true;
  bool verbose = false;
  std::vector<std::string> paths;
};

// The parsed command line's flags and `paths`; false (with the reason on
// stderr) for a value out of its range.
bool ReadFlags(std::vector<std::string> paths, Flags* f) {
  f->runs = absl::GetFlag(FLAGS_runs);
  f->seconds = absl::GetFlag(FLAGS_seconds);
  f->seed = absl::GetFlag(FLAGS_seed);
  f->max_len = absl::GetFlag(FLAGS_max_len);
  f->timeout_s = absl::GetFlag(FLAGS_timeout_s);
  f->artifact_prefix = absl::GetFlag(FLAGS_artifact_prefix);
  f->malloc_limit_mb = absl::GetFlag(FLAGS_malloc_limit_mb);
  f->seeds = !absl::GetFlag(FLAGS_no_seeds);
  f->verbose = absl::GetFlag(FLAGS_verbose);
  f->paths = std::move(paths);
  if (f->max_len > kMaxInputBytes) {
    std::fprintf(stderr, "--max_len=%zu is over %zu\n", f->max_len, kMaxInputBytes);
    return false;
  }
  if (f->timeout_s == 0) {
    std::fprintf(stderr, "--timeout_s must be at least 1\n");
    return false;
  }
  return true;
}

// The files named, directories expanded (sorted, for a stable order).
std::vector<std::string> InputFiles(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> inside;
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        if (e.is_regular_file()) inside.push_back(e.path().string());
      }
      std::sort(inside.begin(), inside.end());
      files.insert(files.end(), inside.begin(), inside.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

// A status as a corpus feature: its code and the start of its message
// without digits and quoted text (names and values from the input), so
// that one check failing on many inputs is one feature.
std::string Feature(const absl::Status& s) {
  std::string f = absl::StrCat(static_cast<int>(s.code()), ":");
  char quote = 0;
  for (char c : s.message()) {
    if (f.size() >= 64) break;
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      f.push_back(c);
    }
  }
  return f;
}

int Main(int argc, char** argv) {
  Flags flags;
  std::vector<std::string> paths = ParseCommandLine(
      argc, argv,
      "A fuzz target's program: replays its seeds and the inputs named, then with --runs or "
      "--seconds\nmutates them (fuzz/driver.cc).\n\nusage: PROGRAM [FLAGS] [FILE|DIR]...");
  if (!ReadFlags(std::move(paths), &flags)) return 2;
  const std::vector<Target>& targets = Targets();
  if (targets.size() != 1) {
    std::fprintf(stderr, "a fuzz program links exactly one target, this one has %zu\n",
                 targets.size());
    return 2;
  }
  const Target& target = targets[0];
  std::snprintf(g_crash_path, sizeof(g_crash_path), "%scrash-%s-%d", flags.artifact_prefix.c_str(),
                target.name, static_cast<int>(getpid()));
  std::snprintf(g_timeout_path, sizeof(g_timeout_path), "%stimeout-%s-%d",
                flags.artifact_prefix.c_str(), target.name, static_cast<int>(getpid()));
#ifndef TW_FUZZ_SANITIZED
  if (flags.malloc_limit_mb > 0) {
    const rlim_t bytes = static_cast<rlim_t>(flags.malloc_limit_mb) << 20;
    rlimit limit{bytes, bytes};
    setrlimit(RLIMIT_AS, &limit);
  }
#endif
  // Protocol Buffers logs every malformed string field: millions of lines.
  google::protobuf::SetLogHandler(
      [](google::protobuf::LogLevel, const char*, int, const std::string&) {});
  for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) signal(sig, OnCrashSignal);
  signal(SIGALRM, OnTimeout);
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(OnSanitizerDeath);

  std::vector<std::string> corpus;
  if (flags.seeds) corpus = target.seeds();
  const size_t num_seeds = corpus.size();
  for (const std::string& path : InputFiles(flags.paths)) {
    std::optional<std::string> bytes = ReadFile(path);
    if (!bytes) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 2;
    }
    corpus.push_back(*std::move(bytes));
  }

  std::set<std::string> features;
  std::map<absl::StatusCode, int64_t> codes;
  auto run = [&](const std::string& input, bool replay) {
    g_current = input.data();
    g_current_size = input.size();
    alarm(flags.timeout_s);
    const absl::Status s = target.run(input);
    alarm(0);
    ++codes[s.code()];
    if (replay && flags.verbose) {
      std::printf("%zu bytes: %s\n", input.size(), s.ToString().c_str());
    }
    return features.insert(Feature(s)).second;
  };

  const auto start = std::chrono::steady_clock::now();
  for (const std::string& input : corpus) run(input, true);
  const size_t replayed = corpus.size();
  std::printf("%s: replayed %zu inputs (%zu seeds), %zu distinct statuses\n", target.name, replayed,
              num_seeds, features.size());

  int64_t executions = 0;
  if ((flags.runs > 0 || flags.seconds > 0) && !corpus.empty()) {
    ByteMutator mutator(flags.seed);
    const auto fuzz_start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - fuzz_start).count();
    };
    while ((flags.runs <= 0 || executions < flags.runs) &&
           (flags.seconds <= 0 || elapsed() < flags.seconds)) {
      const std::string& parent = corpus[executions % corpus.size()];
      // Mutants grow to --max_len; a larger seed (TF's event files, graphs)
      // is not cut, which would break its framing.
      const size_t max_len = std::max(flags.max_len, parent.size());
      // Half the mutants keep the input's structure (fuzz/mutator.h).
      std::optional<std::string> structured;
      if (target.mutate != nullptr && mutator.Below(2) == 0)
        structured = target.mutate(parent, mutator);
      std::string input =
          structured ? *std::move(structured) : mutator.Mutate(parent, corpus, max_len);
      if (input.size() > max_len) input.resize(max_len);
      ++executions;
      if (run(input, false) && corpus.size() < 10000) corpus.push_back(std::move(input));
    }
    const double seconds = elapsed();
    std::printf(
        "%s: fuzzed %lld executions in %.1f s (%.0f/s), corpus %zu, %zu distinct "
        "statuses, 0 crashes, 0 timeouts\n",
        target.name, static_cast<long long>(executions), seconds,
        seconds > 0 ? executions / seconds : 0.0, corpus.size(), features.size());
  }
  std::string by_code;
  for (const auto& [code, n] : codes) {
    absl::StrAppend(&by_code, by_code.empty() ? "" : ", ", absl::StatusCodeToString(code), " ", n);
  }
  std::printf("%s: statuses: %s; %.1f s in all\n", target.name, by_code.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace
}  // namespace fuzz
}  // namespace towerflow

int main(int argc, char** argv) { return towerflow::fuzz::Main(argc, argv); }
