// The examples' training steps on one GPU, as a replayed step records them
// (runtime/step_replay.h): with batches of 128 images and int32 labels fed,
// as the Estimator feeds them, the GPU partition specialised to those
// shapes (runtime/capture_specializer.h) holds only capturable kernels,
// every host value it reads is known before the step runs, and the labels
// (in host memory, int32 on a GPU) are only copied to the GPU. No GPU is needed: the graph is placed on a
// stand-in GPU device whose memory is the host's, and the specialiser
// folds host values with host kernels alone. The GPU kernels are linked
// under --config=cuda only; without them there is nothing to check.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "examples/cifar10/model.h"
#include "examples/resnet/model.h"
#include "framework/device.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "ops/gen/array_ops.h"
#include "ops/variables.h"
#include "runtime/capture_specializer.h"
#include "runtime/device_mgr.h"
#include "runtime/graph_optimizer.h"
#include "runtime/placer.h"
#include "runtime/step_graph.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// A GPU for placement and memory types only: its kernels are never run.
class StandInGpu final : public Device {
 public:
  explicit StandInGpu(ThreadPool* pool)
      : Device(LocalDeviceName(kDeviceGpu, 0), kDeviceGpu, CpuAllocator(), pool) {}
  bool has_device_memory() const override { return true; }
  bool kernels_only_enqueue() const override { return true; }
  absl::StatusOr<Tensor> CopyToHost(const Tensor& t) override { return t.DeepCopy(); }
  absl::StatusOr<Tensor> CopyFromHost(const Tensor& t) override { return t.DeepCopy(); }
};

struct Step {
  GraphDef graph;
  std::string loss, train_op;
};

// One tower on /gpu:0 of `model_fn`, its images and labels fed.
Step BuildStep(ModelFn model_fn, const Params& params, int64_t side) {
  ReplicateOptions options;
  options.devices = {"/gpu:0"};
  absl::StatusOr<ModelFn> towers = ReplicateModelFn(std::move(model_fn), options);
  EXPECT_TRUE(towers.ok()) << towers.status();
  Scope root = Scope::NewRootScope();
  const Scope gpu = root.WithDevice("/gpu:0");
  FeatureMap features, labels;
  features["images"] = ops::Placeholder(gpu.WithOpName("images"), DT_FLOAT,
                                        ops::Placeholder::Shape({-1, side, side, 3}));
  labels["labels"] =
      ops::Placeholder(gpu.WithOpName("labels"), DT_INT32, ops::Placeholder::Shape({-1}));
  EstimatorSpec spec = (*towers)(root, features, labels, ModeKeys::kTrain, params);
  GlobalVariablesInitializer(root);
  Step step;
  absl::Status built = root.ToGraphDef(&step.graph);
  EXPECT_TRUE(built.ok()) << built;
  step.loss = spec.loss.node()->name();
  step.train_op = spec.train_op.node()->name();
  return step;
}

// Why the step's GPU partition cannot be recorded; OK when it can.
absl::Status RecordingRefusal(const Step& step, int64_t side) {
  auto pool = std::make_unique<ThreadPool>("plan", 1);
  TW_ASSIGN_OR_RETURN(std::unique_ptr<DeviceMgr> cpus,
                      DeviceMgr::Create({{kDeviceCpu, 1}}, pool.get()));
  StandInGpu gpu(pool.get());
  std::unique_ptr<DeviceMgr> devices = DeviceMgr::Borrowing({&gpu, cpus->devices()[0]});
  Graph graph;
  TW_RETURN_IF_ERROR(ImportGraphDef(step.graph, &graph));
  Placement placement;
  TW_RETURN_IF_ERROR(PlaceGraph(graph, *devices, PlacerOptions{true}, &placement));
  TW_ASSIGN_OR_RETURN(StepGraphs steps, BuildStepGraphs(graph, placement, {"images", "labels"},
                                                        {step.loss}, {step.train_op}));
  std::string devices_used;
  for (const auto& [device, def] : steps.partitions) {
    absl::StrAppend(&devices_used, device, " (");
    int shown = 0;
    for (const NodeDef& n : def.node()) {
      if (device != gpu.name() && n.op()[0] != '_' && shown++ < 12) {
        const Node* node = graph.FindNode(n.name());
        absl::StrAppend(&devices_used, n.name(), ":", n.op(), "@",
                        node != nullptr ? node->requested_device() : "?", " ");
      }
    }
    absl::StrAppend(&devices_used, ") ");
  }
  if (steps.partitions.size() != 1 || steps.partitions.count(gpu.name()) == 0) {
    return absl::FailedPreconditionError(absl::StrCat("the step runs on ", devices_used));
  }
  GraphDef partition = steps.partitions.at(gpu.name());
  TW_RETURN_IF_ERROR(OptimizePartition(GraphOptimizerOptions(), &gpu, pool.get(), &partition));
  return SpecializeForCapture(partition, {TensorShape({128, side, side, 3}), TensorShape({128})},
                              {"images", "labels"}, steps.num_retvals,
                              &gpu, cpus->host_device(), pool.get())
      .status();
}

TEST(GpuReplayPlanTest, TheExamplesTrainingStepsCanBeRecorded) {
#ifndef TOWERFLOW_CUDA
  GTEST_SKIP() << "the GPU kernels are linked under --config=cuda only";
#endif
  Params cifar;
  cifar.values = {{"num_classes", 10}, {"batch_size", 128}, {"steps_per_epoch", 390}};
  Params resnet = cifar;
  resnet.values["resnet_size"] = 20;
  EXPECT_TRUE(RecordingRefusal(BuildStep(cifar10::ModelFn, cifar, 24), 24).ok())
      << RecordingRefusal(BuildStep(cifar10::ModelFn, cifar, 24), 24);
  EXPECT_TRUE(RecordingRefusal(BuildStep(resnet::ModelFn, resnet, 32), 32).ok())
      << RecordingRefusal(BuildStep(resnet::ModelFn, resnet, 32), 32);
}

}  // namespace
}  // namespace towerflow
