// The CIFAR-10 tutorial model trained across processes in the two forms:
// parameter servers (1 ps + 2 workers, asynchronous, TF 1.x's between-graph
// replication) and all-reduce (2 processes, ReplicateModelFn over the
// cluster). Prints each worker's seconds per step and the bytes it moved per
// step. Random 24x24x3 images, 64 per worker and step.
//
//   mpirun -np 3 --oversubscribe bazel-bin/bench/ps_cifar10 ps
//   mpirun -np 2 --oversubscribe bazel-bin/bench/ps_cifar10 allreduce
//
// with OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
// OMPI_MCA_btl=self,vader and OMPI_MCA_btl_vader_single_copy_mechanism=none
// in the environment (bench/README.md).
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "distribute/server.h"
#include "distribute/variables.h"
#include "estimator/replicate_model_fn.h"
#include "examples/cifar10/model.h"
#include "graph/device_setter.h"
#include "ops/const_op.h"
#include "ops/variables.h"
#include "train/session_manager.h"

namespace towerflow {
namespace {

constexpr int kBatch = 64;
constexpr int kWarmup = 5;
constexpr int kSteps = 30;

FeatureMap RandomBatch(const Scope& s, int seed, FeatureMap* labels) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> pixel;
  std::uniform_int_distribution<int32_t> label(0, 9);
  std::vector<float> images(kBatch * 24 * 24 * 3);
  for (float& v : images) v = pixel(gen);
  std::vector<int32_t> classes(kBatch);
  for (int32_t& c : classes) c = label(gen);
  (*labels)["labels"] = ops::Const(s, MakeTensorProto<int32_t>(classes, TensorShape({kBatch})));
  return {
      {"images", ops::Const(s, MakeTensorProto<float>(images, TensorShape({kBatch, 24, 24, 3})))}};
}

int64_t TrainableBytes(const Graph& graph) {
  int64_t bytes = 0;
  for (const Variable& v : GetVariables(graph, GraphKeys::kTrainableVariables)) {
    bytes += v.shape().num_elements() * 4;
  }
  return bytes;
}

// Runs `train` kWarmup + kSteps times; seconds per step over the last kSteps.
absl::StatusOr<double> TimeSteps(Session* session, const std::string& train,
                                 const std::function<void()>& after_warmup) {
  absl::Time start;
  for (int i = 0; i < kWarmup + kSteps; ++i) {
    if (i == kWarmup) {
      after_warmup();
      start = absl::Now();
    }
    TW_RETURN_IF_ERROR(session->Run({}, {}, {train}, nullptr));
  }
  return absl::ToDoubleSeconds(absl::Now() - start) / kSteps;
}

absl::Status RunPs() {
  TW_ASSIGN_OR_RETURN(distribute::ClusterSpec spec,
                      distribute::ClusterSpec::Parse("ps=1,worker=2"));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<distribute::Server> server,
                      distribute::Server::Create({spec}));
  if (server->task().job == "ps") return server->Join();
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions setter;
  setter.ps_tasks = 1;
  setter.worker_device = server->task().name();
  TW_ASSIGN_OR_RETURN(DeviceFunction fn, ReplicaDeviceSetter(setter));
  const Scope s = root.WithDeviceFunction(fn);
  FeatureMap labels;
  const FeatureMap features = RandomBatch(s, server->task().task, &labels);
  const EstimatorSpec model = cifar10::ModelFn(s, features, labels, ModeKeys::kTrain, {});
  const std::string init = GlobalVariablesInitializer(s).node()->name();
  TW_ASSIGN_OR_RETURN(train::ReadyOp ready, train::ReportUninitializedVariables(s));
  const int64_t variable_bytes = TrainableBytes(*root.graph());
  TW_ASSIGN_OR_RETURN(GraphDef graph, root.ToGraphDef());
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, server->NewSession({}));
  TW_RETURN_IF_ERROR(session->Create(graph));
  if (server->is_chief()) {
    TW_RETURN_IF_ERROR(session->Run({}, {}, {init}, nullptr));
  } else {
    TW_RETURN_IF_ERROR(train::WaitForVariables(session.get(), ready, absl::Minutes(5)));
  }
  int64_t sent = 0, received = 0;
  TW_ASSIGN_OR_RETURN(const double seconds,
                      TimeSteps(session.get(), model.train_op.node()->name(), [&] {
                        sent = server->bytes_sent();
                        received = server->bytes_received();
                      }));
  std::printf(
      "ps, worker %d: %.3f sec/batch; per step %.2f MB sent, %.2f MB received "
      "(trainable variables %.2f MB)\n",
      server->task().task, seconds, (server->bytes_sent() - sent) / 1e6 / kSteps,
      (server->bytes_received() - received) / 1e6 / kSteps, variable_bytes / 1e6);
  session.reset();
  server->Stop();
  return absl::OkStatus();
}

absl::Status RunAllReduce() {
  TW_ASSIGN_OR_RETURN(distribute::Cluster * cluster, distribute::Cluster::Get());
  Scope root = Scope::NewRootScope();
  ReplicateOptions options;
  options.devices = {"/cpu:0"};
  TW_ASSIGN_OR_RETURN(ModelFn fn, ReplicateModelFn(cifar10::ModelFn, options));
  FeatureMap labels;
  const FeatureMap features = RandomBatch(root, cluster->rank(), &labels);
  const EstimatorSpec model = fn(root, features, labels, ModeKeys::kTrain, {});
  const std::string init = GlobalVariablesInitializer(root).node()->name();
  const std::string local_init = LocalVariablesInitializer(root).node()->name();
  const std::string broadcast = distribute::BroadcastGlobalVariables(root).node()->name();
  const int64_t variable_bytes = TrainableBytes(*root.graph());
  TW_ASSIGN_OR_RETURN(GraphDef graph, root.ToGraphDef());
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession({}));
  TW_RETURN_IF_ERROR(session->Create(graph));
  TW_RETURN_IF_ERROR(session->Run({}, {}, {init, local_init}, nullptr));
  TW_RETURN_IF_ERROR(session->Run({}, {}, {broadcast}, nullptr));
  TW_ASSIGN_OR_RETURN(const double seconds,
                      TimeSteps(session.get(), model.train_op.node()->name(), [] {}));
  std::printf(
      "all-reduce, process %d: %.3f sec/batch; per step %.2f MB of gradients all-reduced "
      "(sent and received by each process)\n",
      cluster->rank(), seconds, variable_bytes / 1e6);
  return absl::OkStatus();
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  absl::Status s;
  if (mode == "ps") {
    s = towerflow::RunPs();
  } else if (mode == "allreduce") {
    s = towerflow::RunAllReduce();
  } else {
    std::fprintf(stderr, "usage: %s ps|allreduce (under mpirun -np 3 | -np 2)\n", argv[0]);
    return 2;
  }
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
