// The examples' training graphs on one GPU tower: every node that asks for
// the GPU has a GPU kernel for its types, but for the known gaps below. The
// placer puts a colocation group where all its members have kernels, and
// gradients are colocated with their ops, so one node without a GPU kernel
// moves a forward op, its gradient and their activations to the CPU: on an
// H100 that made ResNet's step two to three times slower (bench/README.md).
// No GPU is needed: the graph is built, not run. The GPU kernels are linked
// under --config=cuda only; without them there is nothing to check.
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/types.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "examples/cifar10/model.h"
#include "examples/resnet/model.h"
#include "framework/device.h"
#include "framework/kernel_registry.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// The op and type ("Sum int32": T, else Tidx, else SrcT) of every node
// asking for the GPU that has no GPU kernel.
std::set<std::string> WithoutGpuKernel(ModelFn model_fn, const Params& params, int64_t side,
                                       const std::string& name) {
  ReplicateOptions options;
  options.devices = {"/gpu:0"};
  absl::StatusOr<ModelFn> towers = ReplicateModelFn(std::move(model_fn), options);
  EXPECT_TRUE(towers.ok()) << towers.status();
  if (!towers.ok()) return {};
  RunConfig config;
  config.model_dir = testing::MakeTempDir(name);
  Estimator estimator(*towers, config, params);
  const Signature features = {{"images", {DT_FLOAT, PartialTensorShape({-1, side, side, 3})}}};
  const Signature labels = {{"labels", {DT_INT32, PartialTensorShape({-1})}}};
  const std::string path = config.model_dir + "/graph.pbtxt";
  absl::Status exported = estimator.ExportGraph(ModeKeys::kTrain, features, labels, path);
  EXPECT_TRUE(exported.ok()) << exported;
  absl::StatusOr<GraphDef> graph = ReadGraphDef(path);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return {};
  std::set<std::string> missing;
  int on_gpu = 0;
  for (const NodeDef& node : graph->node()) {
    if (!absl::StrContains(node.device(), "GPU")) continue;
    ++on_gpu;
    if (FindKernelDef(kDeviceGpu, node).ok()) continue;
    std::string key = node.op();
    for (const char* attr : {"T", "Tidx", "SrcT"}) {
      auto it = node.attr().find(attr);
      if (it == node.attr().end()) continue;
      absl::StrAppend(&key, " ", DataTypeString(it->second.type()));
      break;  // the first of them names the kernel's type
    }
    missing.insert(key);
  }
  EXPECT_GT(on_gpu, 100) << name << ": the tower's nodes ask for the GPU";
  return missing;
}

// Nodes of the examples' towers that may run without a GPU kernel; empty
// since the loss's weighting (a NotEqual count, and the int32 comparisons,
// selects, one-hot and sums of its reductions' gradients) and the
// piecewise-constant learning rate (LessEqual, SelectV2) have them. A new
// gap must be named here, with why.
const std::set<std::string>& KnownGaps() {
  static const auto* gaps = new std::set<std::string>{};
  return *gaps;
}

TEST(GpuPlacementTest, TheExamplesTowersHaveGpuKernels) {
#ifndef TOWERFLOW_CUDA
  GTEST_SKIP() << "the GPU kernels are linked under --config=cuda only";
#endif
  Params cifar;
  cifar.values = {{"num_classes", 10}, {"batch_size", 128}, {"steps_per_epoch", 390}};
  Params resnet = cifar;
  resnet.values["resnet_size"] = 20;
  std::set<std::string> seen;
  for (const auto& [name, missing] :
       {std::pair{"cifar10", WithoutGpuKernel(cifar10::ModelFn, cifar, 24, "gpu_cifar10")},
        std::pair{"resnet", WithoutGpuKernel(resnet::ModelFn, resnet, 32, "gpu_resnet")}}) {
    for (const std::string& op : missing) {
      EXPECT_EQ(KnownGaps().count(op), 1u) << name << ": " << op << " has no GPU kernel";
      seen.insert(op);
    }
  }
  // A gap closed comes off the list.
  for (const std::string& op : KnownGaps())
    EXPECT_EQ(seen.count(op), 1u) << op << " has a GPU kernel now";
}

}  // namespace
}  // namespace towerflow
