// Towerflow's cross-process all-reduce against raw MPI_Allreduce on the same
// buffers, under mpirun (bench/README.md has the command and the figures):
//   raw       MPI_Allreduce in place on one float buffer of all the elements;
//   raw per-tensor  MPI_Allreduce in place on each tensor's own buffer, one
//             call per tensor: the baseline of the unfused rows;
//   cluster   distribute::Cluster::AllReduceSum on one tensor of them;
//   op fused  one MpiAllReduce op over the model's tensors (fed; 64 MiB
//             fusion), run by a Session, as ReplicateModelFn does each step;
//   op per-tensor  the same with fusion off (one collective per tensor);
//   session alone  an IdentityN in place of the op: the Session's part of
//             the fed rows;
//   op in a step   the fused op over tensors its producers make in the step,
//             as a training step's gradients come (the step's time less
//             that of the same step with an IdentityN of the tensors in
//             the op's place): they write into the op's fusion buffer;
//     copying in   the same with each tensor also read by another node, so
//             the op copies them into its buffer;
//     unfused      the op in a step with fusion off (each tensor summed in
//             the buffer its producer made), against raw per-tensor in
//             the same round;
//   op node   the op's own time, start to end, in the trace of the step
//             (and of its copying-in and unfused forms), beside raw MPI.
// Two sets: ResNet-20's 0.27 M parameters in its 61 tensors, and 25 M
// parameters in 100 tensors. Each figure is the median of 300 runs (30 on
// the large set), all taking turns, every run between barriers; rank 0
// prints the table.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distribute/cluster.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nccl_ops.h"
#include "runtime/client_session.h"
#include "runtime/session.h"
#include "runtime/step_stats.h"

namespace towerflow {
namespace {

// ResNet-20's trainable tensors (CIFAR-10, 16/32/64 filters): 19
// convolutions with batch norm, two 1x1 projections, the dense layer.
std::vector<int64_t> ResNet20Sizes() {
  std::vector<int64_t> sizes = {3 * 3 * 3 * 16, 16, 16};
  for (int stage = 0; stage < 3; ++stage) {
    const int64_t out = 16 << stage, in = stage == 0 ? 16 : out / 2;
    for (int conv = 0; conv < 6; ++conv) {
      sizes.push_back(3 * 3 * (conv == 0 ? in : out) * out);
      sizes.push_back(out);
      sizes.push_back(out);
    }
    if (stage > 0) sizes.push_back(in * out);  // the projection shortcut
  }
  sizes.push_back(64 * 10);
  sizes.push_back(10);
  return sizes;
}

constexpr int kWarmUpRounds = 5;

double Median(std::vector<double> t) {
  if (t.empty()) return 0;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The median seconds of each of `runs`, measured side by side: warm-up
// rounds, then `rounds` rounds that run each once in turn, every run between
// barriers (so drift in the machine's load hits all of them alike).
std::vector<double> MedianSeconds(distribute::Cluster* cluster, int rounds,
                                  const std::vector<std::function<void()>>& runs) {
  for (int i = 0; i < kWarmUpRounds; ++i) {
    for (const auto& run : runs) run();
  }
  std::vector<std::vector<double>> times(runs.size());
  for (int i = 0; i < rounds; ++i) {
    for (size_t r = 0; r < runs.size(); ++r) {
      (void)cluster->Barrier();
      const auto start = std::chrono::steady_clock::now();
      runs[r]();
      times[r].push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& t : times) medians.push_back(Median(std::move(t)));
  return medians;
}

// One Session running an MpiAllReduce over fed tensors of `sizes`, as
// gradients arrive in a step; with a negative threshold, an IdentityN (the
// Session's own cost of feeding and fetching them).
struct OpRun {
  OpRun(const std::vector<int64_t>& sizes, int64_t threshold)
      : root(Scope::NewRootScope().WithDevice("/cpu:0")) {  // the host path, MPI's
    std::vector<Output> tensors;
    for (int64_t s : sizes) {
      Output x = ops::Placeholder(root, DT_FLOAT);
      Tensor value(DT_FLOAT, TensorShape({s}));
      std::fill_n(value.data<float>(), s, 1.0f);
      feeds.emplace(x, value);
      tensors.push_back(x);
    }
    sums = threshold < 0 ? ops::IdentityN(root, tensors).output
                         : ops::MpiAllReduce(root, tensors,
                                             ops::MpiAllReduce::FusionThresholdBytes(threshold))
                               .sum;
    session = std::make_unique<ClientSession>(root);
  }
  void Run() {
    out.clear();  // last run's outputs let go, as a step's are
    (void)session->Run(feeds, sums, &out);
  }
  Scope root;
  ClientSession::FeedType feeds;
  OutputList sums;
  std::unique_ptr<ClientSession> session;
  std::vector<Tensor> out;
};

// The op in a step of its own, over tensors its producers make in the step
// (a constant times a fed scalar, as a backprop op makes a gradient), its
// sums used in the step and not fetched. The op's share of the step is the
// step's time less that of the same step with an IdentityN of the tensors
// in its place (`with_op` false), which keeps them all alive until it runs,
// as the op does: producers whose outputs die at once would write one hot
// buffer over and over, which a training step does not. The processes meet
// after their producers in both. With `read_elsewhere`, a Shape of each
// tensor reads it too, so the producers cannot write into the op's fusion
// buffer (Note [Fusion buffer] in distribute/mpi_ops.cc) and the op copies
// them in.
// RunTraced runs the step with a full trace and keeps the op node's own
// time, start to end.
struct InStepRun {
  InStepRun(const std::vector<int64_t>& sizes, bool with_op, bool read_elsewhere,
            int64_t threshold = int64_t{64} << 20)
      : root(Scope::NewRootScope().WithDevice("/cpu:0")) {
    scale = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({}));
    one.data<float>()[0] = 1.0f;
    std::vector<Output> tensors;
    for (int64_t s : sizes) {
      Tensor value(DT_FLOAT, TensorShape({s}));
      std::fill_n(value.data<float>(), s, 1.0f);
      tensors.push_back(ops::Mul(root, ops::Const(root, value.AsProto()), scale));
      if (read_elsewhere) targets.push_back(Output(ops::Shape(root, tensors.back())).op());
    }
    // Both processes meet once their producers are done (a one-float sum),
    // so the op's time is not the other process's producers running late.
    std::vector<Operation> made;
    for (const Output& t : tensors) made.push_back(t.op());
    const Operation met =
        ops::MpiAllReduce(root.WithControlDependencies(made), {ops::Const(root, 0.0f)}).operation;
    const Scope after = root.WithControlDependencies({met});
    const Operation sum =
        with_op
            ? ops::MpiAllReduce(after, tensors, ops::MpiAllReduce::FusionThresholdBytes(threshold))
                  .operation
            : ops::IdentityN(after, tensors).operation;
    sum_name = sum.name();
    targets.push_back(sum);
    // One thread each: the two processes share this machine's two cores,
    // and a process waiting in MPI spins on its core.
    SessionOptions options;
    options.inter_op_parallelism_threads = 1;
    options.intra_op_parallelism_threads = 1;
    session = std::make_unique<ClientSession>(root, options);
  }
  void Run() { (void)session->Run({{scale, one}}, {}, targets, nullptr); }
  void RunTraced() {
    RunOptions options;
    options.trace_level = RunOptions::TraceLevel::kFullTrace;
    RunMetadata metadata;
    (void)session->Run(options, {{scale, one}}, {}, targets, nullptr, &metadata);
    for (const DeviceStepStats& device : metadata.step_stats.dev_stats) {
      for (const NodeExecStats& node : device.node_stats) {
        if (node.node_name == sum_name) {
          node_seconds.push_back(1e-6 * static_cast<double>(node.end_micros - node.start_micros));
        }
      }
    }
  }
  Scope root;
  std::string sum_name;
  std::vector<double> node_seconds;  // RunTraced's
  Output scale;
  Tensor one{DT_FLOAT, TensorShape({})};
  std::vector<Operation> targets;
  std::unique_ptr<ClientSession> session;
};

void Measure(distribute::Cluster* cluster, const char* name, const std::vector<int64_t>& sizes,
             int small_rounds, int large_rounds) {
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  std::vector<float> raw(total, 1.0f);
  std::vector<std::vector<float>> raw_tensors;
  for (int64_t size : sizes) raw_tensors.emplace_back(size, 1.0f);
  Tensor one(DT_FLOAT, TensorShape({total}));
  std::fill_n(one.data<float>(), total, 1.0f);
  OpRun fused(sizes, int64_t{64} << 20), per_tensor(sizes, 0), session_alone(sizes, -1);
  InStepRun in_step(sizes, true, false), stand_in(sizes, false, false),
      in_step_copied(sizes, true, true), stand_in_read(sizes, false, true),
      in_step_unfused(sizes, true, false, 0);
  const auto raw_run = [&] {
    MPI_Allreduce(MPI_IN_PLACE, raw.data(), static_cast<int>(total), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
  };
  const auto raw_per_tensor_run = [&] {
    for (std::vector<float>& t : raw_tensors) {
      MPI_Allreduce(MPI_IN_PLACE, t.data(), static_cast<int>(t.size()), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    }
  };
  // Many rounds on the small set, whose step rows are differences of two
  // medians of a fraction of a millisecond each.
  const int rounds = total < 1000000 ? small_rounds : large_rounds;
  const std::vector<double> s = MedianSeconds(
      cluster, rounds,
      {raw_run, raw_per_tensor_run, [&] { (void)cluster->AllReduceSum(&one); },
       [&] { fused.Run(); }, [&] { per_tensor.Run(); }, [&] { session_alone.Run(); }});
  // The steps on their own, beside raw MPI again: the sessions above leave
  // their pools' threads spinning a while after each run, which on two
  // shared cores would slow whichever step follows.
  const std::vector<double> step = MedianSeconds(
      cluster, rounds,
      {raw_run, [&] { in_step.Run(); }, [&] { stand_in.Run(); }, [&] { in_step_copied.Run(); },
       [&] { stand_in_read.Run(); }, raw_per_tensor_run, [&] { in_step_unfused.Run(); }});
  // The op nodes' own times in traced steps, beside raw MPI once more.
  const std::vector<double> traced_raw =
      MedianSeconds(cluster, rounds,
                    {raw_run, raw_per_tensor_run, [&] { in_step.RunTraced(); },
                     [&] { in_step_copied.RunTraced(); }, [&] { in_step_unfused.RunTraced(); }});
  // The nodes' times of the rounds MedianSeconds timed, past its warm-up.
  const auto node_median = [](const std::vector<double>& t) {
    return Median({t.begin() + std::min<size_t>(kWarmUpRounds, t.size()), t.end()});
  };
  const double raw_s = s[0];
  if (!cluster->is_chief()) return;
  const double bytes = 4.0 * static_cast<double>(total);
  std::printf("%-24s %9lld floats %4zu tensors\n", name, static_cast<long long>(total),
              sizes.size());
  // Each row as a share of raw MPI on one buffer; the unfused rows also as
  // a share of raw MPI on each tensor.
  const auto row = [&](const char* what, double s, double per_tensor_s = 0) {
    std::printf("  %-16s %9.3f ms  %7.2f GB/s  %5.1f%% of raw MPI", what, s * 1e3, bytes / s / 1e9,
                100.0 * raw_s / s);
    if (per_tensor_s > 0) std::printf("  %5.1f%% of raw per-tensor", 100.0 * per_tensor_s / s);
    std::printf("\n");
  };
  row("raw MPI", s[0]);
  row("raw per-tensor", s[1]);
  row("cluster", s[2]);
  row("op fused", s[3]);
  row("op per-tensor", s[4], s[1]);
  std::printf(
      "  %-16s %9.3f ms  (the Session feeding and fetching the tensors, in the fed op rows)\n",
      "session alone", s[5] * 1e3);
  // The op's share of a step: the step less the same step with a stand-in,
  // as a share of raw MPI in the same round.
  std::printf("  %-16s %9.3f ms  (raw MPI again, beside the steps)\n", "raw MPI", step[0] * 1e3);
  const auto step_row = [&](const char* what, double t) {
    std::printf("  %-16s %9.3f ms  %7.2f GB/s  %5.1f%% of raw MPI\n", what, t * 1e3,
                bytes / t / 1e9, 100.0 * step[0] / t);
  };
  step_row("op in a step", step[1] - step[2]);
  step_row("  copying in", step[3] - step[4]);
  std::printf("  %-16s %9.3f ms  (raw per-tensor again, beside the steps)\n", "raw per-tensor",
              step[5] * 1e3);
  const double unfused = step[6] - step[2];
  std::printf("  %-16s %9.3f ms  %7.2f GB/s  %5.1f%% of raw per-tensor\n", "  unfused",
              unfused * 1e3, bytes / unfused / 1e9, 100.0 * step[5] / unfused);
  std::printf("  %-16s %9.3f ms  (the step with an IdentityN for the op)\n", "stand-in step",
              step[2] * 1e3);
  // The op node's own time in a traced step, start to end.
  std::printf("  %-16s %9.3f ms, per-tensor %.3f ms  (raw MPI again, beside the traced steps)\n",
              "raw MPI", traced_raw[0] * 1e3, traced_raw[1] * 1e3);
  const auto node_row = [&](const char* what, const InStepRun& r, double raw_t, const char* of) {
    const double t = node_median(r.node_seconds);
    std::printf("  %-16s %9.3f ms  %7.2f GB/s  %5.1f%% of %s\n", what, t * 1e3, bytes / t / 1e9,
                100.0 * raw_t / t, of);
  };
  node_row("op node", in_step, traced_raw[0], "raw MPI");
  node_row("  copying in", in_step_copied, traced_raw[0], "raw MPI");
  node_row("  unfused", in_step_unfused, traced_raw[1], "raw per-tensor");
}

// mpi_allreduce [--small_only] [--rounds=N]: N runs of the small set (300)
// and N/10 of the large one (30); --small_only leaves the large one out
// (over a slow link it takes minutes a row).
int Main(int argc, char** argv) {
  bool small_only = false;
  int rounds = 300;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--small_only") {
      small_only = true;
    } else if (arg.rfind("--rounds=", 0) == 0 && std::atoi(arg.c_str() + 9) >= 10) {
      rounds = std::atoi(arg.c_str() + 9);
    } else {
      std::fprintf(stderr, "usage: mpi_allreduce [--small_only] [--rounds=N >= 10]\n");
      return 2;
    }
  }
  absl::StatusOr<distribute::Cluster*> cluster = distribute::Cluster::Get();
  if (!cluster.ok()) {
    std::fprintf(stderr, "%s\n", std::string(cluster.status().message()).c_str());
    return 1;
  }
  if ((*cluster)->size() < 2) {
    std::fprintf(stderr, "run under mpirun with at least 2 processes (bench/README.md)\n");
    return 1;
  }
  if ((*cluster)->is_chief()) std::printf("%d processes\n", (*cluster)->size());
  Measure(*cluster, "ResNet-20 (0.27 M)", ResNet20Sizes(), rounds, rounds / 10);
  if (!small_only) {
    Measure(*cluster, "25 M in 100 tensors", std::vector<int64_t>(100, 250000), rounds,
            rounds / 10);
  }
  return 0;
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) { return towerflow::Main(argc, argv); }
