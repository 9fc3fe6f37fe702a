#include "tests/reference_files.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace towerflow {

std::optional<std::string> ReferenceFilePath(const std::string& relative) {
  namespace fs = std::filesystem;
  std::vector<fs::path> roots;
  if (const char* dir = std::getenv("TOWERFLOW_REFERENCE_DIR")) roots.push_back(dir);
  for (const char* var : {"TEST_SRCDIR", "RUNFILES_DIR"}) {
    if (const char* dir = std::getenv(var)) {
      roots.push_back(fs::path(dir) / "towerflow_tf_reference");
      roots.push_back(fs::path(dir) / "towerflow" / "external" / "towerflow_tf_reference");
    }
  }
  for (const fs::path& root : roots) {
    std::error_code ec;
    const fs::path candidate = root / relative;
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return std::nullopt;
}

}  // namespace towerflow
