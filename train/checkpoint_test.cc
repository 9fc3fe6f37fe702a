// Checkpoint files: round trip, the state file, max_to_keep, corruption
// (every bit flip and every truncation is DataLoss), lying headers, and a
// writer killed at random moments (the latest checkpoint stays loadable).
//
// No sessions or thread pools here: the kill test forks.
#include "train/checkpoint.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/crc32c.h"
#include "core/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

std::vector<NamedTensor> Sample() {
  return {{"conv1/weights", Literal<float>({2, 2}, {1.5f, -2.f, 3.25f, 0.f})},
          {"global_step", Scalar<int64_t>(42)},
          {"empty", Literal<double>({0, 3}, {})}};
}

TEST(CheckpointTest, RoundTrip) {
  const std::string dir = testing::MakeTempDir("roundtrip");
  TW_ASSERT_OK(WriteCheckpoint(dir + "/c", Sample()));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> back, ReadCheckpoint(dir + "/c"));
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].name, "conv1/weights");
  EXPECT_THAT(back[0].tensor, TensorIs<float>({2, 2}, {1.5f, -2.f, 3.25f, 0.f}));
  EXPECT_THAT(back[1].tensor, TensorIs<int64_t>({}, {42}));
  EXPECT_THAT(back[2].tensor, TensorIs<double>({0, 3}, {}));
  EXPECT_THAT(ReadCheckpoint(dir + "/missing"), StatusIs(absl::StatusCode::kNotFound, "missing"));
  std::vector<NamedTensor> dup = {{"a", Scalar<float>(1)}, {"a", Scalar<float>(2)}};
  EXPECT_THAT(WriteCheckpoint(dir + "/d", dup),
              StatusIs(absl::StatusCode::kInvalidArgument, "duplicate tensor name 'a'"));
}

TEST(CheckpointTest, StateFileKeepsMaxToKeep) {
  // The model directory need not exist yet, nor its parent.
  const std::string dir = testing::MakeTempDir("keep") + "/runs/1";
  EXPECT_THAT(LatestCheckpoint(dir), StatusIs(absl::StatusCode::kNotFound, ""));
  for (int step : {10, 20, 30}) {
    TW_ASSERT_OK_AND_ASSIGN(std::string path,
                            SaveCheckpoint(dir, "model.ckpt", step, Sample(), /*max_to_keep=*/2));
    EXPECT_EQ(path, absl::StrCat(dir, "/model.ckpt-", step));
  }
  TW_ASSERT_OK_AND_ASSIGN(std::string latest, LatestCheckpoint(dir));
  EXPECT_EQ(latest, dir + "/model.ckpt-30");
  EXPECT_THAT(ReadCheckpoint(dir + "/model.ckpt-10"), StatusIs(absl::StatusCode::kNotFound, ""));
  TW_EXPECT_OK(ReadCheckpoint(dir + "/model.ckpt-20").status());
  TW_ASSERT_OK_AND_ASSIGN(std::string text, ReadFileToString(dir + "/checkpoint"));
  EXPECT_THAT(text, HasSubstr("model_checkpoint_path: \"model.ckpt-30\"\n"
                              "all_model_checkpoint_paths: \"model.ckpt-20\"\n"
                              "all_model_checkpoint_paths: \"model.ckpt-30\"\n"));
  // A state file from TensorFlow (absolute paths, no timestamps) is read too.
  TW_ASSERT_OK(WriteFileAtomically(dir + "/checkpoint", "model_checkpoint_path: \"" + dir +
                                                            "/model.ckpt-20\"\n"
                                                            "all_model_checkpoint_paths: \"" +
                                                            dir + "/model.ckpt-20\"\n"));
  TW_ASSERT_OK_AND_ASSIGN(latest, LatestCheckpoint(dir));
  EXPECT_EQ(latest, dir + "/model.ckpt-20");
  TW_ASSERT_OK(WriteFileAtomically(dir + "/checkpoint", "model_checkpoint_path: 7 7"));
  EXPECT_THAT(LatestCheckpoint(dir), StatusIs(absl::StatusCode::kDataLoss, "checkpoint"));
}

TEST(CheckpointTest, EveryBitFlipIsDataLoss) {
  const std::string dir = testing::MakeTempDir("flip");
  const std::string path = dir + "/c";
  TW_ASSERT_OK(WriteCheckpoint(path, Sample()));
  TW_ASSERT_OK_AND_ASSIGN(const std::string good, ReadFileToString(path));
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit : {0, 3, 7}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      TW_ASSERT_OK(WriteFileAtomically(path, bad));
      absl::StatusOr<std::vector<NamedTensor>> r = ReadCheckpoint(path);
      ASSERT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << "byte " << i << " bit " << bit;
      EXPECT_THAT(r.status().message(), HasSubstr(path));
    }
  }
}

TEST(CheckpointTest, EveryTruncationIsDataLoss) {
  const std::string dir = testing::MakeTempDir("truncate");
  const std::string path = dir + "/c";
  TW_ASSERT_OK(WriteCheckpoint(path, Sample()));
  TW_ASSERT_OK_AND_ASSIGN(const std::string good, ReadFileToString(path));
  for (size_t n = 0; n < good.size(); ++n) {
    TW_ASSERT_OK(WriteFileAtomically(path, good.substr(0, n)));
    EXPECT_THAT(ReadCheckpoint(path), StatusIs(absl::StatusCode::kDataLoss, path)) << n;
  }
  TW_ASSERT_OK(WriteFileAtomically(path, good + "x"));
  EXPECT_THAT(ReadCheckpoint(path),
              StatusIs(absl::StatusCode::kDataLoss, "1 unexpected bytes after the last tensor"));
}

// A record whose checksum is right but whose header lies.
std::string File(const std::string& record) {
  auto put32 = [](std::string* s, uint32_t v) { s->append(reinterpret_cast<char*>(&v), 4); };
  std::string out = "TWCKPT01";
  put32(&out, 1);
  put32(&out, crc32c::Mask(crc32c::Value(out)));
  put32(&out, static_cast<uint32_t>(record.size()));
  out += record;
  put32(&out, crc32c::Mask(crc32c::Value(record)));
  return out;
}

std::string Record(int32_t dtype, std::vector<int64_t> dims, uint64_t data_length,
                   size_t data_bytes) {
  std::string r;
  uint32_t name_length = 1;
  r.append(reinterpret_cast<char*>(&name_length), 4);
  r += "w";
  r.append(reinterpret_cast<char*>(&dtype), 4);
  uint32_t rank = static_cast<uint32_t>(dims.size());
  r.append(reinterpret_cast<char*>(&rank), 4);
  for (int64_t d : dims) r.append(reinterpret_cast<char*>(&d), 8);
  r.append(reinterpret_cast<char*>(&data_length), 8);
  r.append(data_bytes, '\0');
  return r;
}

TEST(CheckpointTest, LyingHeadersAreDataLoss) {
  const std::string dir = testing::MakeTempDir("lying");
  const std::string path = dir + "/c";
  struct Case {
    std::string record;
    std::string message;
  } cases[] = {
      // 2^40 floats claimed, 8 bytes present: refused before allocating.
      {Record(1, {int64_t{1} << 40}, uint64_t{4} << 40, 8), "claims 4398046511104 data bytes"},
      {Record(1, {2}, 8, 4), "claims 8 data bytes; the record holds 4"},
      {Record(1, {-3}, 12, 12), "invalid shape"},
      {Record(7, {1}, 1, 1), "invalid dtype 7"},  // string
      {Record(999, {1}, 4, 4), "invalid dtype 999"},
      {Record(1, std::vector<int64_t>(65, 1), 4, 4), "rank 65"},
      {Record(1, {int64_t{1} << 62, 8}, 8, 8), "invalid shape"},
  };
  for (const Case& c : cases) {
    TW_ASSERT_OK(WriteFileAtomically(path, File(c.record)));
    EXPECT_THAT(ReadCheckpoint(path), StatusIs(absl::StatusCode::kDataLoss, c.message));
  }
  // A count larger than the records present.
  std::string two = File(Record(1, {1}, 4, 4));
  two[8] = 2;
  uint32_t crc = crc32c::Mask(crc32c::Value(absl::string_view(two).substr(0, 12)));
  std::memcpy(&two[12], &crc, 4);
  TW_ASSERT_OK(WriteFileAtomically(path, two));
  EXPECT_THAT(ReadCheckpoint(path), StatusIs(absl::StatusCode::kDataLoss, "truncated"));
}

// Reads one int64 the child wrote to `fd`; false when the child closed it.
bool ReadReport(int fd, int64_t* step) {
  char* out = reinterpret_cast<char*>(step);
  size_t got = 0;
  while (got < sizeof(*step)) {
    const ssize_t n = ::read(fd, out + got, sizeof(*step) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += n;
  }
  return true;
}

// A writer killed at a random point of a save never loses a save it finished
// nor leaves the latest checkpoint unreadable. The child reports each
// finished save through a pipe; the parent waits for the first report of the
// round before it kills, so every round tests a kill after a completed save
// however slow or busy the disk is. The random delay after the report only
// spreads the kill over the next saves; the outcome does not depend on it.
TEST(CheckpointTest, KilledWriterLeavesTheLatestCheckpointLoadable) {
  const std::string dir = testing::MakeTempDir("killed");
  std::mt19937 rng(7);
  int64_t highest_seen = 0;
  for (int round = 0; round < 30; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Child: save ever newer checkpoints (1 MB each), reporting each step
      // once it is saved, until killed.
      ::close(fds[0]);
      int64_t step = 1;
      absl::StatusOr<std::string> latest = LatestCheckpoint(dir);
      if (latest.ok()) {
        absl::SimpleAtoi(latest->substr(latest->rfind('-') + 1), &step);
        ++step;
      }
      for (;; ++step) {
        Tensor t(DT_FLOAT, TensorShape({256 * 1024}));
        std::fill_n(t.data<float>(), t.NumElements(), static_cast<float>(step));
        if (!SaveCheckpoint(dir, "model.ckpt", step, {{"w", t}, {"step", Scalar<int64_t>(step)}}, 3)
                 .ok() ||
            ::write(fds[1], &step, sizeof(step)) != sizeof(step)) {
          _exit(1);
        }
      }
    }
    ::close(fds[1]);
    int64_t reported = 0;
    const bool got_report = ReadReport(fds[0], &reported);
    if (got_report) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(fds[0]);
    ASSERT_TRUE(got_report) << "round " << round << ": the writer exited before its first save";
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer failed on its own";
    absl::StatusOr<std::string> latest = LatestCheckpoint(dir);
    ASSERT_TRUE(latest.ok()) << latest.status();
    absl::StatusOr<std::vector<NamedTensor>> tensors = ReadCheckpoint(*latest);
    ASSERT_TRUE(tensors.ok()) << "round " << round << ": " << tensors.status();
    const int64_t step = (*tensors)[1].tensor.data<int64_t>()[0];
    EXPECT_EQ(*latest, absl::StrCat(dir, "/model.ckpt-", step));
    EXPECT_GE(step, reported) << "a finished save was lost";
    EXPECT_GE(step, highest_seen);
    highest_seen = step;
    const float* w = (*tensors)[0].tensor.data<float>();
    EXPECT_TRUE(std::all_of(w, w + (*tensors)[0].tensor.NumElements(),
                            [&](float v) { return v == static_cast<float>(step); }));
  }
  EXPECT_GE(highest_seen, 30);  // every round saved at least once
}

}  // namespace
}  // namespace towerflow
