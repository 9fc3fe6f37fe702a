// The string ops checkpoint graphs build file names with: StringJoin,
// ShardedFilename, and StaticRegexFullMatch (RE2 syntax, as TensorFlow).
// SaveV2 and RestoreV2 are checked on TF's own files in
// saved_model/loader_test.cc and train/. ReadFile, WriteFile and
// MatchingFiles in a fresh directory, with TF 2.21's matches and messages.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

// TF 2.21's buckets: FarmHash's Fingerprint64 modulo num_buckets.
TEST(StringOpsTest, StringToHashBucketFastMatchesTensorFlow) {
  Tensor words(DT_STRING, TensorShape({5}));
  const std::vector<std::string> text = {"hello", "", "a", "Towerflow",
                                         "\xc3\xbc"
                                         "n\xc3\xaf"
                                         "code"};
  for (int i = 0; i < 5; ++i) words.data<std::string>()[i] = text[i];
  KernelRunner r("StringToHashBucketFast");
  r.Attr("num_buckets", int64_t{1000});
  EXPECT_THAT(RunOk(r, {words}), TensorIs<int64_t>({5}, {296, 263, 939, 204, 954}));
  KernelRunner none("StringToHashBucketFast");
  none.Attr("num_buckets", int64_t{0});
  EXPECT_FALSE(none.Run({words}).ok());
}

TEST(StringOpsTest, StringJoinBroadcastsScalars) {
  KernelRunner r("StringJoin");
  r.Attr("N", int64_t{3}).Attr("separator", "-");
  EXPECT_THAT(RunOk(r, {Scalar<std::string>("ckpt"), Literal<std::string>({2}, {"a", "b"}),
                        Scalar<std::string>("x")}),
              TensorIs<std::string>({2}, {"ckpt-a-x", "ckpt-b-x"}));
  EXPECT_THAT(r.Run({Literal<std::string>({2}, {"a", "b"}), Literal<std::string>({1}, {"c"}),
                     Scalar<std::string>("x")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "StringJoin inputs must be scalars or of one shape"));
}

TEST(StringOpsTest, ShardedFilenameNamesShardOfN) {
  KernelRunner r("ShardedFilename");
  EXPECT_THAT(RunOk(r, {Scalar<std::string>("/tmp/m"), Scalar<int32_t>(1), Scalar<int32_t>(3)}),
              TensorIs<std::string>({}, {"/tmp/m-00001-of-00003"}));
}

TEST(StringOpsTest, StaticRegexFullMatchMatchesWholeStrings) {
  // TF 2's save functions test for an s3 path so.
  KernelRunner r("StaticRegexFullMatch");
  r.Attr("pattern", "^s3://.*");
  EXPECT_THAT(RunOk(r, {Literal<std::string>({3}, {"s3://bucket/m", "/tmp/s3://x", ""})}),
              TensorIs<bool>({3}, {true, false, false}));
  // Full matches only: a prefix does not do.
  KernelRunner digits("StaticRegexFullMatch");
  digits.Attr("pattern", "[0-9]+");
  EXPECT_THAT(RunOk(digits, {Literal<std::string>({2, 1}, {"123", "123a"})}),
              TensorIs<bool>({2, 1}, {true, false}));
  KernelRunner bad("StaticRegexFullMatch");
  bad.Attr("pattern", "(unclosed");
  EXPECT_THAT(bad.Run({Scalar<std::string>("x")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Invalid pattern: (unclosed, error: missing ): (unclosed"));
}

// ToBool, the predicate of a lowered If or While: a scalar's truth, a
// tensor's non-emptiness.
TEST(StringOpsTest, ToBoolFollowsTensorFlowsRule) {
  const auto truth = [](const Tensor& t) {
    KernelRunner r("ToBool");
    absl::StatusOr<std::vector<Tensor>> out = r.Run({t});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() && (*out)[0].scalar<bool>()();
  };
  EXPECT_TRUE(truth(Scalar<int32_t>(-2)));
  EXPECT_FALSE(truth(Scalar<int32_t>(0)));
  EXPECT_TRUE(truth(Scalar<float>(0.5f)));
  EXPECT_FALSE(truth(Scalar<float>(0)));
  EXPECT_TRUE(truth(Scalar<bool>(true)));
  EXPECT_TRUE(truth(Scalar<std::string>("a")));
  EXPECT_FALSE(truth(Scalar<std::string>("")));
  // Not a scalar: true when it has elements, whatever they are.
  EXPECT_TRUE(truth(Literal<float>({2}, {0, 0})));
  EXPECT_FALSE(truth(Literal<float>({0}, {})));
}

// DeviceIndex on a CPU: TF 2.21's 1 for [GPU, CPU] and [GPU] (not there:
// the count), 0 for [] and 1 for [cpu, CPU] (types are matched exactly).
TEST(StringOpsTest, DeviceIndexIsTheDeviceTypesPlace) {
  const auto index = [](std::vector<std::string> names) {
    KernelRunner r("DeviceIndex");
    r.Attr("device_names", names);
    return RunOk(r, {});
  };
  EXPECT_THAT(index({"GPU", "CPU"}), TensorIs<int32_t>({}, {1}));
  EXPECT_THAT(index({"GPU"}), TensorIs<int32_t>({}, {1}));
  EXPECT_THAT(index({}), TensorIs<int32_t>({}, {0}));
  EXPECT_THAT(index({"cpu", "CPU"}), TensorIs<int32_t>({}, {1}));
}

// tf.fingerprint: TF 2.21's bytes (FarmHash Fingerprint64, little-endian).
TEST(StringOpsTest, FingerprintIsTensorFlows) {
  KernelRunner r("Fingerprint");
  const Tensor farmhash = Scalar<std::string>("farmhash64");
  EXPECT_THAT(RunOk(r, {Literal<std::string>({2}, {"a", "hello"}), farmhash}),
              TensorIs<uint8_t>({2, 8}, {227, 117, 223, 182, 101, 66, 69, 179, 232, 12, 56, 49, 169,
                                         229, 139, 180}));
  // Several strings per row: the fingerprint of their fingerprints.
  EXPECT_THAT(RunOk(r, {Literal<std::string>({2, 2}, {"a", "b", "c", "d"}), farmhash}),
              TensorIs<uint8_t>(
                  {2, 8}, {122, 64, 59, 169, 136, 60, 55, 83, 52, 252, 224, 38, 64, 226, 155, 60}));
  EXPECT_THAT(RunOk(r, {Literal<int32_t>({2, 2}, {1, 2, 3, 4}), farmhash}),
              TensorIs<uint8_t>({2, 8}, {76, 18, 253, 133, 168, 204, 240, 10, 254, 162, 60, 240,
                                         103, 244, 53, 255}));
  EXPECT_THAT(r.Run({Literal<float>({1}, {1.5f}), Scalar<std::string>("md5")}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Unsupported fingerprint method: md5"));
  EXPECT_THAT(r.Run({Scalar<float>(1.5f), farmhash}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "`data` should have at least one dimension: []"));
}

// A directory under the test's temporary one (Bazel's, fresh each run).
std::string FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

void Touch(const std::string& path, const std::string& contents = "") {
  std::ofstream(path) << contents;
}

Tensor Str(std::string s) { return Scalar<std::string>(std::move(s)); }

TEST(FileOpsTest, WriteFileMakesDirectoriesAndReadFileReadsItBack) {
  const std::string dir = FreshDir("write_read");
  KernelRunner write("WriteFile");
  const std::string bytes("a\0b\xff", 4);
  ASSERT_TRUE(write.Run({Str(dir + "/new/x/y.bin"), Str(bytes)}).ok());
  KernelRunner read("ReadFile");
  EXPECT_THAT(RunOk(read, {Str(dir + "/new/x/y.bin")}), TensorIs<std::string>({}, {bytes}));
  // Replaced, not appended to.
  ASSERT_TRUE(write.Run({Str(dir + "/new/x/y.bin"), Str("z")}).ok());
  EXPECT_THAT(RunOk(read, {Str(dir + "/new/x/y.bin")}), TensorIs<std::string>({}, {"z"}));
}

TEST(FileOpsTest, TfsMessages) {
  const std::string dir = FreshDir("messages");
  Touch(dir + "/a.txt", "hello");
  KernelRunner read("ReadFile");
  EXPECT_THAT(read.Run({Str(dir + "/nope")}),
              StatusIs(absl::StatusCode::kNotFound, dir + "/nope; No such file or directory"));
  EXPECT_THAT(read.Run({Str(dir)}),
              StatusIs(absl::StatusCode::kFailedPrecondition, dir + "; Is a directory"));
  EXPECT_THAT(read.Run({Str(dir + "/a.txt/x")}),
              StatusIs(absl::StatusCode::kFailedPrecondition, dir + "/a.txt/x; Not a directory"));
  EXPECT_THAT(read.Run({Literal<std::string>({1}, {"a"})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Input filename tensor must be scalar, but had shape: [1]"));
  KernelRunner write("WriteFile");
  EXPECT_THAT(write.Run({Str(dir), Str("abc")}),
              StatusIs(absl::StatusCode::kFailedPrecondition, dir + "; Is a directory"));
  EXPECT_THAT(write.Run({Str(dir + "/a.txt/x"), Str("abc")}),
              StatusIs(absl::StatusCode::kFailedPrecondition, dir + "/a.txt/x; Not a directory"));
  EXPECT_THAT(write.Run({Str(dir + "/q"), Literal<std::string>({1}, {"a"})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Contents tensor must be scalar, but had shape: [1]"));
}

TEST(FileOpsTest, MatchingFilesGlobsAndSortsAsTf) {
  const std::string dir = FreshDir("matching");
  ::mkdir((dir + "/sub").c_str(), 0755);
  for (const char* name : {"a.txt", "b.txt", ".hidden.txt", "Z.txt", "sub/c.txt"}) {
    Touch(dir + "/" + name);
  }
  const auto match = [&](const Tensor& patterns) {
    KernelRunner r("MatchingFiles");
    return RunOk(r, {patterns});
  };
  const auto in = [&](std::vector<std::string> names) {
    for (std::string& n : names) n = dir + "/" + n;
    return names;
  };
  const auto vec = [](std::vector<std::string> v) {
    return Literal<std::string>({static_cast<int64_t>(v.size())}, v);
  };
  // A leading dot matches too, and "Z" sorts before "a".
  EXPECT_THAT(match(Str(dir + "/*.txt")),
              TensorIs<std::string>({4}, in({".hidden.txt", "Z.txt", "a.txt", "b.txt"})));
  EXPECT_THAT(match(Str(dir + "/*/*.txt")), TensorIs<std::string>({1}, in({"sub/c.txt"})));
  EXPECT_THAT(match(Str(dir + "/?.txt")),
              TensorIs<std::string>({3}, in({"Z.txt", "a.txt", "b.txt"})));
  EXPECT_THAT(match(Str(dir + "/[ab].txt")), TensorIs<std::string>({2}, in({"a.txt", "b.txt"})));
  EXPECT_THAT(match(Str(dir + "/*")),
              TensorIs<std::string>({5}, in({".hidden.txt", "Z.txt", "a.txt", "b.txt", "sub"})));
  EXPECT_THAT(match(Str(dir + "/a.txt")), TensorIs<std::string>({1}, in({"a.txt"})));
  EXPECT_THAT(match(Str(dir + "/zz.txt")), TensorIs<std::string>({0}, {}));
  EXPECT_THAT(match(Str("")), TensorIs<std::string>({0}, {}));
  // Several patterns: every match, sorted together.
  EXPECT_THAT(match(vec({dir + "/b*", dir + "/a*"})),
              TensorIs<std::string>({2}, in({"a.txt", "b.txt"})));
  KernelRunner bad("MatchingFiles");
  EXPECT_THAT(bad.Run({Literal<std::string>({1, 1}, {"a"})}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Input patterns tensor must be scalar or vector, but had shape: [1,1]"));
}

}  // namespace
}  // namespace towerflow
