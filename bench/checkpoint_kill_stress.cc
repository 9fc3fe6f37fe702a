// Crash safety of checkpoints under SIGKILL (docs/RELIABILITY.md): a child
// trains a small model and saves after every step (train::Saver,
// max_to_keep 3), resuming from the latest checkpoint each time it starts;
// the parent kills it with SIGKILL at a random moment, again and again.
// After each kill the latest checkpoint named by the state file must load
// and hold, bitwise, the weights the model has after that checkpoint's
// global step (the parent computes the trajectory once, in process: the
// training is deterministic). Temporary files and unlisted checkpoints a
// kill leaves behind must be gone after the next save.
//
//   bazel run -c opt //bench:checkpoint_kill_stress -- --kills=1000 [--dir=D]
//       [--max_delay_ms=400] [--seed=1]
//
// Prints one line per 100 kills and a summary; exits 1 when a checkpoint
// did not load or did not match.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "core/status_macros.h"
#include "ops/const_op.h"
#include "ops/gen/math_ops.h"
#include "runtime/client_session.h"
#include "tools/flags.h"
#include "train/checkpoint.h"
#include "train/optimizers.h"
#include "train/saver.h"

ABSL_FLAG(int32_t, kills, 1000, "SIGKILLs to send");
ABSL_FLAG(int32_t, max_delay_ms, 400, "each kill comes within this many ms of the child's start");
ABSL_FLAG(uint64_t, seed, 1, "seed of the kills' timing");
ABSL_FLAG(std::string, dir, "", "the model directory (empty: $TMPDIR/towerflow_kill_stress)");
ABSL_FLAG(bool, child, false, "run as the child that trains and saves (the program starts it)");

namespace towerflow {
namespace {

namespace fs = std::filesystem;

// The last step the child trains to; then it exits and the parent starts
// over in an empty directory.
constexpr int64_t kLastStep = 20000;
constexpr int kWidth = 16;

// y = x·w + b on a fixed batch, trained by gradient descent.
struct Model {
  Scope scope = Scope::NewRootScope();
  Variable w, b, step;
  Output w_value, b_value, step_value;  // read once: each value() adds a node
  Operation train_op;
  std::unique_ptr<train::Saver> saver;
  std::unique_ptr<ClientSession> session;

  absl::Status Build() {
    const Scope& s = scope;
    w = GetVariable(s, "w", TensorShape({kWidth, 1}), DT_FLOAT, initializers::Constant(0.25f));
    b = GetVariable(s, "b", TensorShape({}), DT_FLOAT, initializers::Constant(0.0f));
    step = train::GetOrCreateGlobalStep(s);
    w_value = w.value(s);
    b_value = b.value(s);
    step_value = step.value(s);
    std::vector<float> xs(8 * kWidth), ys(8);
    for (int i = 0; i < 8 * kWidth; ++i) xs[i] = static_cast<float>((i * 37) % 11) / 11.0f - 0.4f;
    for (int i = 0; i < 8; ++i) ys[i] = static_cast<float>(i % 3) - 1.0f;
    Tensor x(DT_FLOAT, {8, kWidth}), y(DT_FLOAT, {8, 1});
    std::memcpy(x.raw_data(), xs.data(), xs.size() * sizeof(float));
    std::memcpy(y.raw_data(), ys.data(), ys.size() * sizeof(float));
    Output pred = ops::Add(s, ops::MatMul(s, ops::Const(s, x.AsProto()), w_value), b_value);
    Output loss =
        ops::Mean(s, ops::Square(s, ops::Sub(s, pred, ops::Const(s, y.AsProto()))), {0, 1});
    train::GradientDescentOptimizer opt(0.01f);
    train_op = opt.Minimize(s, loss, step);
    train::SaverOptions options;
    options.max_to_keep = 3;
    TW_ASSIGN_OR_RETURN(saver, train::Saver::Create(s, options));
    TW_RETURN_IF_ERROR(s.status());
    SessionOptions session_options;
    // One thread each: the same arithmetic in every process, bit for bit.
    session_options.inter_op_parallelism_threads = 1;
    session_options.intra_op_parallelism_threads = 1;
    session = std::make_unique<ClientSession>(s, session_options);
    std::vector<Tensor> out;
    return session->Run({}, {}, {GlobalVariablesInitializer(s)}, &out);
  }

  // w then b, as raw floats.
  absl::StatusOr<std::vector<float>> Weights() {
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session->Run({w_value, b_value}, &out));
    std::vector<float> v(out[0].data<float>(), out[0].data<float>() + kWidth);
    v.push_back(*out[1].data<float>());
    return v;
  }
};

// The child: resume, then train and save after every step until kLastStep.
absl::Status Child(const std::string& dir) {
  Model m;
  TW_RETURN_IF_ERROR(m.Build());
  int64_t step = 0;
  if (absl::StatusOr<std::string> latest = LatestCheckpoint(dir); latest.ok()) {
    TW_RETURN_IF_ERROR(m.saver->Restore(*m.session, *latest));
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(m.session->Run({m.step_value}, &out));
    step = *out[0].data<int64_t>();
  }
  std::vector<Tensor> out;
  while (step < kLastStep) {
    TW_RETURN_IF_ERROR(m.session->Run({}, {}, {m.train_op}, &out));
    ++step;
    TW_RETURN_IF_ERROR(m.saver->Save(*m.session, dir, step).status());
  }
  return absl::OkStatus();
}

struct Totals {
  int kills = 0;
  int before_first_save = 0;
  int finished = 0;  // the child reached kLastStep before its kill
  int unloadable = 0;
  int mismatched = 0;
  int64_t max_step = 0;
  size_t most_files = 0;
};

// The latest checkpoint of `dir` against the trajectory.
void Check(const std::string& dir, const std::vector<std::vector<float>>& trajectory, Totals* t) {
  absl::StatusOr<std::string> latest = LatestCheckpoint(dir);
  if (absl::IsNotFound(latest.status())) {
    ++t->before_first_save;
    return;
  }
  absl::StatusOr<std::vector<NamedTensor>> tensors =
      latest.ok() ? ReadCheckpoint(*latest) : latest.status();
  if (!tensors.ok()) {
    ++t->unloadable;
    std::fprintf(stderr, "kill %d: the latest checkpoint does not load: %s\n", t->kills,
                 std::string(tensors.status().message()).c_str());
    return;
  }
  int64_t step = -1;
  std::vector<float> w, b;
  for (const NamedTensor& n : *tensors) {
    if (n.name == "global_step") step = *n.tensor.data<int64_t>();
    if (n.name == "w") w.assign(n.tensor.data<float>(), n.tensor.data<float>() + kWidth);
    if (n.name == "b") b.assign(n.tensor.data<float>(), n.tensor.data<float>() + 1);
  }
  w.insert(w.end(), b.begin(), b.end());
  if (step < 1 || step > kLastStep || w.size() != kWidth + 1 ||
      std::memcmp(w.data(), trajectory[step].data(), w.size() * sizeof(float)) != 0) {
    ++t->mismatched;
    std::fprintf(stderr, "kill %d: %s (step %lld) does not hold the trained weights\n", t->kills,
                 latest->c_str(), static_cast<long long>(step));
    return;
  }
  t->max_step = std::max(t->max_step, step);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  t->most_files = std::max(t->most_files, files);
}

int Main(int argc, char** argv) {
  const std::vector<std::string> args = ParseCommandLine(
      argc, argv,
      "checkpoint_kill_stress: SIGKILLs a training child during its saves, then checks that "
      "the latest\ncheckpoint loads and holds the weights of its step.\n\n"
      "usage: checkpoint_kill_stress [FLAGS]");
  const int kills = absl::GetFlag(FLAGS_kills);
  const int max_delay_ms = absl::GetFlag(FLAGS_max_delay_ms);
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  std::string dir = absl::GetFlag(FLAGS_dir);
  if (dir.empty()) dir = (fs::temp_directory_path() / "towerflow_kill_stress").string();
  const bool child = absl::GetFlag(FLAGS_child);
  if (!args.empty() || kills < 0 || max_delay_ms <= 0) {
    std::fprintf(stderr, "bad arguments (--help lists the flags)\n");
    return 2;
  }
  if (child) {
    absl::Status s = Child(dir);
    if (!s.ok()) std::fprintf(stderr, "child: %s\n", s.ToString().c_str());
    return s.ok() ? 0 : 1;
  }

  // The trajectory: the weights after each step 0..kLastStep.
  Model m;
  if (absl::Status s = m.Build(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::vector<std::vector<float>> trajectory;
  std::vector<Tensor> out;
  for (int64_t step = 0; step <= kLastStep; ++step) {
    if (step > 0 && !m.session->Run({}, {}, {m.train_op}, &out).ok()) return 1;
    absl::StatusOr<std::vector<float>> weights = m.Weights();
    if (!weights.ok()) return 1;
    trajectory.push_back(*std::move(weights));
  }

  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  std::mt19937_64 rng(seed);
  Totals t;
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const auto start = std::chrono::steady_clock::now();
  while (t.kills < kills) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl(self.c_str(), self.c_str(), "--child", ("--dir=" + dir).c_str(), nullptr);
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % (max_delay_ms * 1000)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) {
      if (WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "the child failed (exit %d)\n", WEXITSTATUS(status));
        return 1;
      }
      // It finished the run: start over.
      ++t.finished;
      fs::remove_all(dir, ec);
      fs::create_directories(dir);
      continue;
    }
    ++t.kills;
    Check(dir, trajectory, &t);
    if (t.kills % 100 == 0) {
      std::printf("%d kills: %d unloadable, %d mismatched, latest step %lld\n", t.kills,
                  t.unloadable, t.mismatched, static_cast<long long>(t.max_step));
      std::fflush(stdout);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "%d SIGKILLs in %.0f s: %d before the first save, %d checkpoints loaded and matched "
      "bitwise, %d unloadable, %d mismatched; %d runs finished; at most %zu files in the "
      "directory after a kill (3 checkpoints of 2 files and the state file are 7, plus the "
      "temporary files of the save the kill interrupted, which the next save removes)\n",
      t.kills, seconds, t.before_first_save,
      t.kills - t.before_first_save - t.unloadable - t.mismatched, t.unloadable, t.mismatched,
      t.finished, t.most_files);
  return t.unloadable == 0 && t.mismatched == 0 ? 0 : 1;
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) { return towerflow::Main(argc, argv); }
