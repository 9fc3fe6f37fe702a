#include "fuzz/fuzz_target.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "core/file_io.h"
#include "framework/allocator.h"
#include "tests/reference_files.h"

namespace towerflow {
namespace fuzz {
namespace {

std::vector<Target>& MutableTargets() {
  static auto* const targets = new std::vector<Target>();
  return *targets;
}

}  // namespace

bool RegisterTarget(const Target& target) {
  MutableTargets().push_back(target);
  return true;
}

const std::vector<Target>& Targets() { return MutableTargets(); }

SessionOptions FuzzSessionOptions() {
  SessionOptions options;
  options.device_count["CPU"] = 1;
  options.inter_op_parallelism_threads = 2;
  options.intra_op_parallelism_threads = 1;
  // Loops that never end (a While whose condition is always true) end here
  // as DeadlineExceeded.
  options.operation_timeout_in_ms = 2000;
  options.max_tensor_bytes = int64_t{64} << 20;
  options.host_memory_budget_bytes =
      CpuAllocator()->GetStats()->bytes_in_use + (int64_t{512} << 20);
  return options;
}

const std::string& ScratchDir() {
  static const std::string* const dir = [] {
    namespace fs = std::filesystem;
    const char* tmp = std::getenv("TEST_TMPDIR");
    auto* path = new std::string(
        (fs::path(tmp != nullptr ? tmp : "/tmp") / absl::StrCat("towerflow_fuzz_", getpid()))
            .string());
    std::error_code ec;
    fs::create_directories(*path, ec);
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(*dir, ignored);
    });
    return path;
  }();
  return *dir;
}

absl::Status WriteFile(const std::string& path, absl::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> ReferenceFiles(const std::vector<std::string>& relative) {
  std::vector<std::string> out;
  for (const std::string& r : relative) {
    if (std::optional<std::string> path = ReferenceFilePath(r)) {
      if (std::optional<std::string> bytes = ReadFile(*path)) out.push_back(*std::move(bytes));
    }
  }
  return out;
}

std::vector<std::string> CorpusFiles(const std::string& target) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return files;
  const fs::path dir = fs::path(srcdir) / workspace / "fuzz" / "corpus" / target;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file()) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace fuzz
}  // namespace towerflow
