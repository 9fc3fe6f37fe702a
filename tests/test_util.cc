#include "tests/test_util.h"

#include "tests/reference_files.h"

namespace towerflow {
namespace testing {

std::optional<std::string> ReferenceFilePath(const std::string& relative) {
  return ::towerflow::ReferenceFilePath(relative);
}

}  // namespace testing
}  // namespace towerflow
