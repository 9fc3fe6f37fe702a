// two_towers: builds a data-parallel training graph with the DSL, the way
// ReplicateModelFn will: the input batch is split on the parameter-server
// device, each tower runs the same model on its own (virtual CPU) device,
// variables are shared through variable-scope reuse and pinned to the
// parameter server by a ReplicaDeviceSetter, and the tower losses are
// summed. Writes the graph as text.
//
//   bazel run //examples:two_towers -- /tmp/two_towers.pbtxt
//   towerflow inspect /tmp/two_towers.pbtxt
//
// Uses only the public API.
#include <iostream>
#include <string>
#include <vector>

#include "graph/device_setter.h"
#include "graph/graph_io.h"
#include "graph/scope.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/initializers.h"
#include "ops/variables.h"
#include "tools/flags.h"

namespace {

using towerflow::DataType;
using towerflow::Output;
using towerflow::Scope;
using towerflow::TensorShape;
namespace initializers = towerflow::initializers;
namespace ops = towerflow::ops;

constexpr int kTowers = 2;
constexpr char kParameterServer[] = "/device:CPU:0";

// A dense layer in its own variable scope: relu(x @ weights + biases).
Output Dense(const Scope& scope, const std::string& name, Output x, int64_t in, int64_t out,
             bool relu) {
  const Scope s = scope.WithVariableScope(name);
  towerflow::Variable w = towerflow::GetVariable(s, "weights", TensorShape({in, out}));
  towerflow::Variable b = towerflow::GetVariable(s, "biases", TensorShape({out}),
                                                 towerflow::DT_FLOAT, initializers::Zeros());
  Output y = ops::BiasAdd(s, ops::MatMul(s, x, w.value()), b.value());
  return relu ? Output(ops::Relu(s, y)) : y;
}

// The model of one tower: a 784-128-10 MLP and its mean cross-entropy loss.
Output ModelFn(const Scope& scope, Output images, Output labels) {
  Output hidden = Dense(scope, "hidden", images, 784, 128, /*relu=*/true);
  Output logits = Dense(scope, "logits", hidden, 128, 10, /*relu=*/false);
  Output xent = ops::SparseSoftmaxCrossEntropyWithLogits(scope, logits, labels).loss;
  return ops::Mean(scope.WithOpName("loss"), xent, {0});
}

int Run(const std::string& path) {
  Scope root = Scope::NewRootScope();
  root.graph()->set_seed(1);
  const Scope ps = root.WithDevice(kParameterServer);
  Output images = ops::Placeholder(ps.WithOpName("images"), towerflow::DT_FLOAT,
                                   ops::Placeholder::Shape({-1, 784}));
  Output labels =
      ops::Placeholder(ps.WithOpName("labels"), towerflow::DT_INT64, ops::Placeholder::Shape({-1}));
  const Scope split = ps.NewSubScope("split_inputs");
  ops::Split image_shards(split, 0, images, kTowers);
  ops::Split label_shards(split, 0, labels, kTowers);

  std::vector<Output> tower_losses;
  for (int i = 0; i < kTowers; ++i) {
    towerflow::ReplicaDeviceSetterOptions options;
    options.ps_tasks = 1;
    options.ps_device = kParameterServer;
    options.worker_device = "/device:CPU:" + std::to_string(i);
    absl::StatusOr<towerflow::DeviceFunction> setter = towerflow::ReplicaDeviceSetter(options);
    if (!setter.ok()) {
      std::cerr << setter.status() << "\n";
      return 1;
    }
    // Tower 0 has no name prefix and creates the variables; the others reuse.
    const Scope tower = (i == 0 ? root : root.NewSubScope("tower_" + std::to_string(i)))
                            .WithDeviceFunction(*setter)
                            .WithVariableScope("", i == 0 ? towerflow::VariableReuse::kInherit
                                                          : towerflow::VariableReuse::kReuse);
    tower_losses.push_back(ModelFn(tower, image_shards[i], label_shards[i]));
  }
  ops::AddN(ps.WithOpName("total_loss"), tower_losses);
  towerflow::GlobalVariablesInitializer(root);

  towerflow::GraphDef graph_def;
  absl::Status status = root.ToGraphDef(&graph_def);
  if (status.ok()) status = towerflow::WriteGraphDef(graph_def, path);
  if (!status.ok()) {
    std::cerr << "two_towers: " << status << "\n";
    return 1;
  }
  std::cout << "Wrote " << path << ": " << graph_def.node_size() << " nodes, " << kTowers
            << " towers\n";
  for (const towerflow::Variable& v : towerflow::GetVariables(*root.graph())) {
    std::cout << "  variable " << v.name() << " " << v.shape().DebugString() << " on "
              << v.handle().node()->requested_device() << "\n";
  }
  for (int i = 0; i < kTowers; ++i) {
    std::cout << "  tower " << i << " loss " << tower_losses[i].node()->name() << " on "
              << tower_losses[i].node()->requested_device() << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args = towerflow::ParseCommandLine(
      argc, argv,
      "two_towers: builds a two-tower training graph with the DSL and writes it as text.\n\n"
      "usage: two_towers [OUT.pbtxt]   (default: two_towers.pbtxt)");
  if (args.size() > 1) {
    std::cerr << "usage: two_towers [OUT.pbtxt]\n";
    return 2;
  }
  return Run(args.empty() ? "two_towers.pbtxt" : args[0]);
}
