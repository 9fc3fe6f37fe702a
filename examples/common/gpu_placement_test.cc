// The examples' training graphs on one GPU tower: every node that asks for
// the GPU has a GPU kernel for its types, but for the known gaps below. The
// placer puts a colocation group where all its members have kernels, and
// gradients are colocated with their ops, so one node without a GPU kernel
// moves a forward op, its gradient and their activations to the CPU: on an
// H100 that made ResNet's step two to three times slower (bench/README.md).
// No GPU is needed: the graph is built, not run. The GPU kernels are linked
// under --config=cuda only; without them there is nothing to check.
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/types.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "examples/cifar10/model.h"
#include "examples/resnet/imagenet_model.h"
#include "examples/resnet/model.h"
#include "framework/device.h"
#include "framework/kernel_registry.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "runtime/auto_mixed_precision.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// The training graph of `model_fn` on one GPU tower, as exported.
GraphDef TowerGraph(ModelFn model_fn, const Params& params, int64_t side, const std::string& name) {
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
  return graph.ok() ? *std::move(graph) : GraphDef();
}

// The nodes of `graph` that ask for the GPU: the GPU partition, less the
// sends and receives (the rewrite passes over inputs from elsewhere).
GraphDef GpuNodes(const GraphDef& graph) {
  GraphDef gpu;
  for (const NodeDef& node : graph.node()) {
    if (absl::StrContains(node.device(), "GPU")) *gpu.add_node() = node;
  }
  return gpu;
}

// "Sum int32": the op and the type that names its kernel (T, else Tidx,
// else SrcT).
std::string OpAndType(const NodeDef& node) {
  std::string key = node.op();
  for (const char* attr : {"T", "Tidx", "SrcT"}) {
    auto it = node.attr().find(attr);
    if (it == node.attr().end()) continue;
    absl::StrAppend(&key, " ", DataTypeString(it->second.type()));
    break;
  }
  return key;
}

// The op and type of every node of `graph` without a GPU kernel.
std::set<std::string> WithoutGpuKernel(const GraphDef& graph) {
  std::set<std::string> missing;
  for (const NodeDef& node : graph.node()) {
    if (!FindKernelDef(kDeviceGpu, node).ok()) missing.insert(OpAndType(node));
  }
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

Params CifarParams() {
  Params cifar;
  cifar.values = {{"num_classes", 10}, {"batch_size", 128}, {"steps_per_epoch", 390}};
  return cifar;
}

Params ResnetParams() {
  Params resnet = CifarParams();
  resnet.values["resnet_size"] = 20;
  return resnet;
}

// ImageNet's ResNet-50 v1 in NCHW, as a GPU runs it.
Params ImageNetParams() {
  Params imagenet;
  imagenet.values = {{"resnet_size", 50}, {"batch_size", 128}, {"channels_first", 1}};
  return imagenet;
}

TEST(GpuPlacementTest, TheExamplesTowersHaveGpuKernels) {
#ifndef TOWERFLOW_CUDA
  GTEST_SKIP() << "the GPU kernels are linked under --config=cuda only";
#endif
  std::set<std::string> seen;
  for (const auto& [name, graph] :
       {std::pair{"cifar10",
                  GpuNodes(TowerGraph(cifar10::ModelFn, CifarParams(), 24, "gpu_cifar10"))},
        std::pair{"resnet",
                  GpuNodes(TowerGraph(resnet::ModelFn, ResnetParams(), 32, "gpu_resnet"))},
        std::pair{"imagenet", GpuNodes(TowerGraph(resnet::ImageNetModelFn, ImageNetParams(), 224,
                                                  "gpu_imagenet"))}}) {
    EXPECT_GT(graph.node_size(), 100) << name << ": the tower's nodes ask for the GPU";
    for (const std::string& op : WithoutGpuKernel(graph)) {
      EXPECT_EQ(KnownGaps().count(op), 1u) << name << ": " << op << " has no GPU kernel";
      seen.insert(op);
    }
  }
  // A gap closed comes off the list.
  for (const std::string& op : KnownGaps())
    EXPECT_EQ(seen.count(op), 1u) << op << " has a GPU kernel now";
}

// The names of the nodes of `graph` that the mixed-precision rewrite for a
// device of `device_type` moves to `dtype`, and the rewritten graph.
std::pair<std::set<std::string>, GraphDef> Rewritten(const GraphDef& graph, DataType dtype,
                                                     const std::string& device_type) {
  GraphDef rewritten = graph;
  MixedPrecisionOptions options;
  options.dtype = dtype;
  options.device_types = {device_type};
  const absl::Status status = AutoMixedPrecision(options, device_type, &rewritten);
  EXPECT_TRUE(status.ok()) << status;
  std::set<std::string> moved;
  for (const NodeDef& node : rewritten.node()) {
    auto t = node.attr().find("T");
    if (node.op() != "Cast" && t != node.attr().end() && t->second.type() == dtype) {
      moved.insert(node.name());
    }
  }
  return {moved, rewritten};
}

// The towers in mixed precision: the rewrite (runtime/auto_mixed_precision.h)
// moves a node to 16 bits only where its device has a kernel for it, so a
// GPU kernel missing in half or bfloat16 leaves its node, and the nodes
// between it and the next convolution, in float32 behind two casts. The
// CPU has every 16-bit kernel (kernels/cpu/float16_kernels.cc): the GPU
// must move the same nodes as the CPU, which are the ones TF's lists say,
// and every node of the rewritten partition, casts included, has its GPU
// kernel.
TEST(GpuPlacementTest, MixedPrecisionTowersMoveWhatTheListsSay) {
#ifndef TOWERFLOW_CUDA
  GTEST_SKIP() << "the GPU kernels are linked under --config=cuda only";
#endif
  for (const auto& [name, graph] :
       {std::pair{"cifar10",
                  GpuNodes(TowerGraph(cifar10::ModelFn, CifarParams(), 24, "mp_cifar10"))},
        std::pair{"resnet", GpuNodes(TowerGraph(resnet::ModelFn, ResnetParams(), 32, "mp_resnet"))},
        std::pair{"imagenet", GpuNodes(TowerGraph(resnet::ImageNetModelFn, ImageNetParams(), 224,
                                                  "mp_imagenet"))}}) {
    for (DataType dtype : {DT_HALF, DT_BFLOAT16}) {
      SCOPED_TRACE(absl::StrCat(name, " in ", DataTypeString(dtype)));
      const auto [on_gpu, rewritten] = Rewritten(graph, dtype, kDeviceGpu);
      const auto [on_cpu, unused] = Rewritten(graph, dtype, kDeviceCpu);
      std::map<std::string, int> moved;  // by op
      for (const NodeDef& node : rewritten.node()) moved[node.op()] += on_gpu.count(node.name());
      // The models' math: every convolution and its gradients, the batch
      // norms, activations, biases and pools of the forward pass.
      for (const char* op : {"Conv2D", "Conv2DBackpropInput", "Relu", "ReluGrad"}) {
        EXPECT_GT(moved[op], 0) << op;
      }
      EXPECT_GT(moved[name == std::string("cifar10") ? "BiasAdd" : "FusedBatchNormV3"], 0);
      std::set<std::string> only_cpu;
      for (const NodeDef& node : graph.node()) {
        if (on_cpu.count(node.name()) > on_gpu.count(node.name())) only_cpu.insert(OpAndType(node));
      }
      EXPECT_THAT(only_cpu, ::testing::IsEmpty())
          << "nodes left in float32 for want of a GPU kernel";
      EXPECT_THAT(WithoutGpuKernel(rewritten), ::testing::IsEmpty());
    }
  }
}

}  // namespace
}  // namespace towerflow
