// Checkpoint files: round trip, the state file, max_to_keep, corruption
// surfacing as DataLoss (framework/tensor_bundle_test.cc flips every bit of
// both files), the old format refused clearly, and a writer killed at random
// moments (the latest checkpoint stays loadable).
//
// No sessions or thread pools here: the kill test forks.
#include "train/checkpoint.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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
  EXPECT_TRUE(std::filesystem::exists(dir + "/c.index"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/c.data-00000-of-00001"));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> back, ReadCheckpoint(dir + "/c"));
  ASSERT_EQ(back.size(), 3u);  // sorted by name
  EXPECT_EQ(back[0].name, "conv1/weights");
  EXPECT_THAT(back[0].tensor, TensorIs<float>({2, 2}, {1.5f, -2.f, 3.25f, 0.f}));
  EXPECT_EQ(back[1].name, "empty");
  EXPECT_THAT(back[1].tensor, TensorIs<double>({0, 3}, {}));
  EXPECT_EQ(back[2].name, "global_step");
  EXPECT_THAT(back[2].tensor, TensorIs<int64_t>({}, {42}));
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
  // Every file of the dropped checkpoint is gone.
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_THAT(files, ::testing::ElementsAre(
                         "checkpoint", "model.ckpt-20.data-00000-of-00001", "model.ckpt-20.index",
                         "model.ckpt-30.data-00000-of-00001", "model.ckpt-30.index"));
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

// Only regular files are read: a FIFO (which open() would wait on for a
// writer) or a device as the state file, an index or a checkpoint is a
// clear error at once.
TEST(CheckpointTest, FifosAndDevicesAreRefusedWithoutBlocking) {
  const std::string dir = testing::MakeTempDir("fifo");
  ASSERT_EQ(::mkfifo((dir + "/checkpoint").c_str(), 0600), 0) << std::strerror(errno);
  EXPECT_THAT(LatestCheckpoint(dir),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "/checkpoint' is not a regular file (a FIFO, a device or a socket)"));
  ASSERT_EQ(::mkfifo((dir + "/fifo.index").c_str(), 0600), 0) << std::strerror(errno);
  EXPECT_THAT(ReadCheckpoint(dir + "/fifo"),
              StatusIs(absl::StatusCode::kFailedPrecondition, "fifo.index' is not a regular file"));
  ASSERT_EQ(::mkfifo((dir + "/plain").c_str(), 0600), 0) << std::strerror(errno);
  EXPECT_THAT(ReadCheckpoint(dir + "/plain"), StatusIs(absl::StatusCode::kNotFound, ""));
  // The state file names /dev/zero: refused before reading a byte.
  const std::string other = testing::MakeTempDir("dev_zero");
  TW_ASSERT_OK(
      WriteFileAtomically(other + "/checkpoint", "model_checkpoint_path: \"/dev/zero\"\n"));
  TW_ASSERT_OK_AND_ASSIGN(std::string latest, LatestCheckpoint(other));
  EXPECT_THAT(ReadCheckpoint(latest), StatusIs(absl::StatusCode::kNotFound, ""));
  EXPECT_THAT(ReadFileToString("/dev/zero"),
              StatusIs(absl::StatusCode::kFailedPrecondition, "'/dev/zero' is not a regular file"));
  EXPECT_THAT(ReadFileToString(dir),
              StatusIs(absl::StatusCode::kFailedPrecondition, "is a directory"));
}

// What killed saves leave (temporary files, complete checkpoints the state
// file never listed) goes at the next save; a temporary file being written
// and files of other names stay.
TEST(CheckpointTest, TheNextSaveRemovesWhatKilledSavesLeft) {
  const std::string dir = testing::MakeTempDir("leftovers");
  for (int step : {10, 20}) {
    TW_ASSERT_OK(SaveCheckpoint(dir, "model.ckpt", step, Sample(), /*max_to_keep=*/2).status());
  }
  const auto touch = [&](const std::string& name) {
    TW_ASSERT_OK(WriteFileAtomically(dir + "/" + name, "left behind"));
  };
  touch("model.ckpt-30.data-00000-of-00001.tmp.Ab12Cd");  // killed mid-write
  touch("model.ckpt-30.index.tmp.Ef34Gh");
  touch("checkpoint.tmp.Ij56Kl");
  touch("model.ckpt-25.index");  // complete but never recorded
  touch("model.ckpt-25.data-00000-of-00001");
  touch("model.ckpt-best.index");  // not a step: someone else's
  touch("notes.tmp.1");
  // A save in progress holds its temporary file.
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<AtomicFileWriter> writing,
                          AtomicFileWriter::Open(dir + "/model.ckpt-40.index"));
  TW_ASSERT_OK(SaveCheckpoint(dir, "model.ckpt", 30, Sample(), /*max_to_keep=*/2).status());
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!absl::StartsWith(name, "model.ckpt-40.index.tmp.")) files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  EXPECT_THAT(
      files, ::testing::ElementsAre("checkpoint", "model.ckpt-20.data-00000-of-00001",
                                    "model.ckpt-20.index", "model.ckpt-30.data-00000-of-00001",
                                    "model.ckpt-30.index", "model.ckpt-best.index", "notes.tmp.1"));
  TW_ASSERT_OK(writing->Append("index"));
  TW_ASSERT_OK(writing->Commit());
  EXPECT_EQ(testing::ReadFileOrDie(dir + "/model.ckpt-40.index"), "index");
  // Keeping everything (max_to_keep <= 0) keeps unlisted checkpoints too.
  touch("model.ckpt-35.index");
  TW_ASSERT_OK(SaveCheckpoint(dir, "model.ckpt", 50, Sample(), /*max_to_keep=*/0).status());
  EXPECT_TRUE(std::filesystem::exists(dir + "/model.ckpt-35.index"));
}

TEST(CheckpointTest, CorruptFilesAreDataLossNamingTheFile) {
  const std::string dir = testing::MakeTempDir("corrupt");
  const std::string path = dir + "/c";
  TW_ASSERT_OK(WriteCheckpoint(path, Sample()));
  for (const std::string suffix : {".index", ".data-00000-of-00001"}) {
    TW_ASSERT_OK_AND_ASSIGN(const std::string good, ReadFileToString(path + suffix));
    std::string bad = good;
    bad[good.size() / 3] ^= 0x10;
    TW_ASSERT_OK(WriteFileAtomically(path + suffix, bad));
    EXPECT_THAT(ReadCheckpoint(path), StatusIs(absl::StatusCode::kDataLoss, path + suffix));
    TW_ASSERT_OK(WriteFileAtomically(path + suffix, good.substr(0, good.size() - 1)));
    EXPECT_THAT(ReadCheckpoint(path), StatusIs(absl::StatusCode::kDataLoss, path + suffix));
    TW_ASSERT_OK(WriteFileAtomically(path + suffix, good));
  }
  TW_EXPECT_OK(ReadCheckpoint(path).status());
}

TEST(CheckpointTest, TheOldSingleFileFormatIsRefusedClearly) {
  const std::string path = testing::MakeTempDir("old") + "/model.ckpt-100";
  TW_ASSERT_OK(WriteFileAtomically(path, std::string("TWCKPT01") + std::string(8, '\0')));
  EXPECT_THAT(ReadCheckpoint(path),
              StatusIs(absl::StatusCode::kFailedPrecondition, "no longer read"));
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
    // Sorted by name: "step", then "w".
    const int64_t step = (*tensors)[0].tensor.data<int64_t>()[0];
    EXPECT_EQ(*latest, absl::StrCat(dir, "/model.ckpt-", step));
    EXPECT_GE(step, reported) << "a finished save was lost";
    EXPECT_GE(step, highest_seen);
    highest_seen = step;
    const float* w = (*tensors)[1].tensor.data<float>();
    EXPECT_TRUE(std::all_of(w, w + (*tensors)[1].tensor.NumElements(),
                            [&](float v) { return v == static_cast<float>(step); }));
  }
  EXPECT_GE(highest_seen, 30);  // every round saved at least once
}

}  // namespace
}  // namespace towerflow
