// One ps and two workers training asynchronously, where one task dies or
// hangs mid-training (ps_dying_task_test.sh checks what the others do):
//   ps_dying_task_main kill_ps | hang_ps | kill_worker
// kill_ps / hang_ps: the ps task SIGKILLs / SIGSTOPs itself once the chief
// has taken 20 steps (the chief says so through a queue on the ps);
// kill_worker: worker 1 SIGKILLs itself after 20 steps.
// A worker whose step fails prints "rank R: <status>" and exits 1; one that
// gets through all its steps prints "rank R finished all its steps".
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "distribute/server.h"
#include "graph/device_setter.h"
#include "ops/const_op.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/queue_ops.h"
#include "ops/variables.h"
#include "train/optimizers.h"
#include "train/session_manager.h"

namespace towerflow {
namespace distribute {
namespace {

constexpr int kStepsBeforeTrouble = 20;
constexpr int kSteps = 1000000;  // more than a worker gets through before the trouble

struct Model {
  GraphDef graph;
  std::string train, init;
  train::ReadyOp ready;
};

absl::StatusOr<Model> Build(const TaskId& task) {
  Model m;
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions setter;
  setter.ps_tasks = 1;
  setter.worker_device = task.name();
  TW_ASSIGN_OR_RETURN(DeviceFunction fn, ReplicaDeviceSetter(setter));
  const Scope s = root.WithDeviceFunction(fn);
  Variable w = GetVariable(s, "w", TensorShape({1, 1}), DT_DOUBLE, initializers::Constant(0.0));
  Output x = ops::Const(s, MakeTensorProto<double>({-1.5, -0.5, 0.5, 1.5}, TensorShape({4, 1})));
  Output y = ops::Const(s, MakeTensorProto<double>({-3, -1, 1, 3}, TensorShape({4, 1})));
  Output loss = ops::Mean(s, ops::Square(s, ops::Sub(s, ops::MatMul(s, x, w.value()), y)), {0, 1});
  Variable step = train::GetOrCreateGlobalStep(s);
  train::GradientDescentOptimizer optimizer(0.01);
  m.train = optimizer.Minimize(s, loss, step).node()->name();
  m.init = GlobalVariablesInitializer(s).node()->name();
  TW_ASSIGN_OR_RETURN(m.ready, train::ReportUninitializedVariables(s));
  // The chief's word to the ps that the trouble may start.
  const Scope ps = root.WithDevice("/job:ps/task:0");
  Output trouble = ops::FIFOQueueV2(ps.WithOpName("trouble_queue"), {DT_INT64},
                                    ops::FIFOQueueV2::Attrs().SharedName("trouble_queue"));
  ops::QueueEnqueueV2(ps.WithOpName("trouble_enqueue"), trouble, {ops::Const(ps, int64_t{1})});
  ops::QueueDequeueV2(ps.WithOpName("trouble_dequeue"), trouble, {DT_INT64});
  TW_RETURN_IF_ERROR(root.ToGraphDef(&m.graph));
  return m;
}

[[noreturn]] void Fail(int rank, const absl::Status& s) {
  std::printf("rank %d: %s\n", rank, s.ToString().c_str());
  std::fflush(stdout);
  _exit(1);  // mpirun ends the job
}

// The ps: serves, and once the chief has taken kStepsBeforeTrouble steps
// (its word arrives in the queue), sends itself `signal`.
absl::Status RunPs(Server* server, int signal) {
  if (signal == 0) return server->Join();
  TW_ASSIGN_OR_RETURN(Model model, Build(server->task()));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, server->NewSession({}));
  TW_RETURN_IF_ERROR(session->Create(model.graph));
  TW_RETURN_IF_ERROR(session->Run({}, {}, {"trouble_dequeue"}, nullptr));
  raise(signal);
  return server->Join();  // a stopped ps comes back here only if continued
}

absl::Status RunWorker(Server* server, int rank, bool dies) {
  TW_ASSIGN_OR_RETURN(Model model, Build(server->task()));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, server->NewSession({}));
  TW_RETURN_IF_ERROR(session->Create(model.graph));
  if (server->is_chief()) {
    TW_RETURN_IF_ERROR(session->Run({}, {}, {model.init}, nullptr));
  } else {
    TW_RETURN_IF_ERROR(train::WaitForVariables(session.get(), model.ready, absl::Minutes(1)));
  }
  for (int i = 0; i < kSteps; ++i) {
    if (i == kStepsBeforeTrouble) {
      if (dies) raise(SIGKILL);
      if (server->is_chief())
        TW_RETURN_IF_ERROR(session->Run({}, {}, {"trouble_enqueue"}, nullptr));
    }
    const absl::Status s = session->Run({}, {}, {model.train}, nullptr);
    if (!s.ok()) Fail(rank, s);
  }
  std::printf("rank %d finished all its steps\n", rank);
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "kill_ps" && mode != "hang_ps" && mode != "kill_worker") {
    std::fprintf(stderr, "usage: %s kill_ps | hang_ps | kill_worker\n", argv[0]);
    return 2;
  }
  absl::StatusOr<ClusterSpec> spec = ClusterSpec::Parse("ps=1,worker=2");
  if (!spec.ok()) Fail(-1, spec.status());
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Create({*spec});
  if (!server.ok()) Fail(-1, server.status());
  const int rank = spec->RankOf((*server)->task());
  absl::Status s;
  if ((*server)->task().job == "ps") {
    s = RunPs(server->get(), mode == "kill_ps" ? SIGKILL : mode == "hang_ps" ? SIGSTOP : 0);
  } else {
    s = RunWorker(server->get(), rank, mode == "kill_worker" && (*server)->task().task == 1);
  }
  if (!s.ok()) Fail(rank, s);
  return 0;
}

}  // namespace
}  // namespace distribute
}  // namespace towerflow

int main(int argc, char** argv) { return towerflow::distribute::Main(argc, argv); }
