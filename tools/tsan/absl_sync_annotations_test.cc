// Under --config=tsan: data handed from thread to thread through absl::Mutex,
// CondVar and Notification is not reported (the shim gives TSan the edges),
// and a real race -- two threads writing under different mutexes -- still is.
// In other builds the same scenarios run as plain functional checks.
#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

extern char** environ;

namespace {

bool TsanIsLinked() { return dlsym(RTLD_DEFAULT, "__tsan_acquire") != nullptr; }

// --config=tsan sets TOWERFLOW_EXPECT_TSAN=1 for its tests; every other
// build links no TSan runtime.
TEST(AbslSyncAnnotationsTest, TsanIsActiveExactlyWhereTheConfigSaysSo) {
  const char* expect = std::getenv("TOWERFLOW_EXPECT_TSAN");
  EXPECT_EQ(TsanIsLinked(), expect != nullptr && std::string(expect) == "1");
}

TEST(AbslSyncAnnotationsTest, CountersUnderMutexLockAreNotRaces) {
  absl::Mutex mu;
  long counter = 0;  // guarded by mu
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        absl::MutexLock lock(&mu);
        ++counter;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(counter, 4000);
}

TEST(AbslSyncAnnotationsTest, ReaderLocksSeeTheWritersData) {
  absl::Mutex mu;
  std::vector<int> data;  // guarded by mu
  std::thread writer([&] {
    for (int i = 0; i < 100; ++i) {
      absl::MutexLock lock(&mu);
      data.push_back(i);
    }
  });
  bool consistent = true;
  std::thread reader([&] {
    size_t last = 0;
    for (int i = 0; i < 100; ++i) {
      absl::ReaderMutexLock lock(&mu);
      // The vector grows by one element at a time, each equal to its index.
      consistent = consistent && data.size() >= last && data.size() <= 100 &&
                   (data.empty() || data.back() == static_cast<int>(data.size()) - 1);
      last = data.size();
    }
  });
  writer.join();
  reader.join();
  EXPECT_EQ(data.size(), 100u);
  EXPECT_TRUE(consistent);
}

TEST(AbslSyncAnnotationsTest, AwaitAndCondVarHandOverData) {
  absl::Mutex mu;
  absl::CondVar cv;
  std::string message;  // guarded by mu
  bool answered = false;
  std::thread consumer([&] {
    absl::MutexLock lock(&mu);
    // The condition reads what the other thread writes; Abseil evaluates it
    // here and inside the other thread's Unlock.
    mu.Await(absl::Condition(
        +[](std::string* m) { return !m->empty(); }, &message));
    message += " world";
    answered = true;
    cv.Signal();
  });
  {
    absl::MutexLock lock(&mu);
    message = "hello";
    while (!answered) cv.Wait(&mu);
    EXPECT_EQ(message, "hello world");
  }
  consumer.join();
}

TEST(AbslSyncAnnotationsTest, NotificationPublishesWhatWasWrittenBeforeIt) {
  std::vector<int> payload;
  absl::Notification done;
  std::thread producer([&] {
    payload.assign({1, 2, 3});
    done.Notify();
  });
  done.WaitForNotification();
  EXPECT_EQ(payload, std::vector<int>({1, 2, 3}));
  producer.join();
  // The fast path: already notified before the wait.
  absl::Notification early;
  int value = 0;
  std::thread setter([&] {
    value = 7;
    early.Notify();
  });
  setter.join();
  std::thread waiter([&] {
    ASSERT_TRUE(early.WaitForNotificationWithTimeout(absl::Seconds(60)));
    EXPECT_EQ(value, 7);
  });
  waiter.join();
}

// The child process of the next test: two threads write one variable, each
// under its own mutex -- a race no shim may hide.
int RaceUnderDifferentMutexes() {
  absl::Mutex a, b;
  static int shared = 0;
  absl::Notification start;
  std::thread t1([&] {
    start.WaitForNotification();
    absl::MutexLock lock(&a);
    shared = 1;
  });
  std::thread t2([&] {
    start.WaitForNotification();
    absl::MutexLock lock(&b);
    shared = 2;
  });
  start.Notify();
  t1.join();
  t2.join();
  return shared > 0 ? 0 : 1;
}

TEST(AbslSyncAnnotationsTest, ARealRaceIsStillReported) {
  if (!TsanIsLinked()) GTEST_SKIP() << "not a ThreadSanitizer build (--config=tsan)";
  int err[2];
  ASSERT_EQ(pipe(err), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, err[0]);
  char self[] = "/proc/self/exe";
  char flag[] = "--race_child";
  char* argv[] = {self, flag, nullptr};
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, self, &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(err[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = read(err[0], buf, sizeof buf)) > 0;) report.append(buf, n);
  close(err[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_THAT(report, testing::HasSubstr("WARNING: ThreadSanitizer: data race"));
  EXPECT_THAT(report, testing::HasSubstr("RaceUnderDifferentMutexes"));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);  // halt_on_error (the config's TSAN_OPTIONS), or exitcode 66
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--race_child") == 0) return RaceUnderDifferentMutexes();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
