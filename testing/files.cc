#include "testing/files.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace towerflow {
namespace testing {

std::string MakeTempDir(const std::string& name) {
  namespace fs = std::filesystem;
  const char* tmp = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(tmp != nullptr ? tmp : "/tmp") / name;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  EXPECT_FALSE(ec) << "cannot create " << dir << ": " << ec.message();
  return dir.string();
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace testing
}  // namespace towerflow
