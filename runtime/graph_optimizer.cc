#include "runtime/graph_optimizer.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_registry.h"
#include "framework/node_def_util.h"
#include "framework/rendezvous.h"
#include "framework/tensor.h"
#include "graph/graph.h"
#include "graph/graph_io.h"
#include "graph/op_registry.h"
#include "runtime/constant_folding.h"
#include "runtime/graph_view.h"

namespace towerflow {
namespace {

const AttrValue* Attr(const NodeDef& n, const std::string& name) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? nullptr : &it->second;
}
DataType TypeAttr(const NodeDef& n, const std::string& name) {
  const AttrValue* a = Attr(n, name);
  return a == nullptr ? DT_INVALID : a->type();
}
std::string StringAttr(const NodeDef& n, const std::string& name, const std::string& fallback) {
  const AttrValue* a = Attr(n, name);
  return a == nullptr ? fallback : a->s();
}

// The single consumer of `node`'s output 0 reading it as input 0, when
// that is its only reader and no control edge leaves `node`; else -1.
int SoleConsumer(const GraphView& view, const NodeDef& node) {
  const auto& consumers = view.Consumers(node.name(), 0);
  if (consumers.size() != 1 || consumers[0].second != 0) return -1;
  if (view.HasControlConsumers(node.name()) || view.OtherOutputsRead(node.name(), 0)) return -1;
  return consumers[0].first;
}

// The node whose output 0 the input string `input` names, or -1.
int ProducerOfOutput0(const GraphView& view, const std::string& input) {
  absl::StatusOr<TensorId> id = ParseTensorName(input);
  if (!id.ok() || id->index != 0) return -1;
  return view.Find(id->node);
}

bool IsBiasAdd(const NodeDef& n) { return n.op() == "BiasAdd" || n.op() == "BiasAddV1"; }
bool IsBatchNorm(const NodeDef& n) {
  return n.op() == "FusedBatchNorm" || n.op() == "FusedBatchNormV2" || n.op() == "FusedBatchNormV3";
}
bool IsActivation(const NodeDef& n) { return n.op() == "Relu" || n.op() == "Relu6"; }

// One fusable chain: product -> affine [-> activation].
struct Chain {
  int product = -1, affine = -1, activation = -1;
};

// The chain starting at product node `p`, if it can fuse.
std::optional<Chain> MatchChain(const GraphView& view, const GraphDef& def, int p) {
  const NodeDef& product = def.node(p);
  const bool conv = product.op() == "Conv2D";
  if (!conv && product.op() != "MatMul") return std::nullopt;
  const DataType t = TypeAttr(product, "T");
  if (t != DT_FLOAT && t != DT_DOUBLE) return std::nullopt;
  Chain chain{p};
  chain.affine = SoleConsumer(view, product);
  if (chain.affine < 0) return std::nullopt;
  const NodeDef& affine = def.node(chain.affine);
  const std::string format = StringAttr(product, "data_format", "NHWC");
  if (IsBiasAdd(affine)) {
    if (TypeAttr(affine, "T") != t) return std::nullopt;
    // BiasAddV1 and NHWC add to the last dimension; NCHW to dimension 1,
    // which is the channels of an NCHW convolution.
    const std::string bias_format =
        affine.op() == "BiasAddV1" ? "NHWC" : StringAttr(affine, "data_format", "NHWC");
    if (bias_format != (conv ? format : "NHWC")) return std::nullopt;
  } else if (IsBatchNorm(affine) && conv) {
    const AttrValue* training = Attr(affine, "is_training");
    if (training == nullptr || training->b() || t != DT_FLOAT ||
        TypeAttr(affine, "T") != DT_FLOAT ||
        (affine.op() != "FusedBatchNorm" && TypeAttr(affine, "U") != DT_FLOAT) ||
        StringAttr(affine, "data_format", "NHWC") != format ||
        view.OtherOutputsRead(affine.name(), 0)) {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  const int a = SoleConsumer(view, affine);
  if (a >= 0 && IsActivation(def.node(a)) && TypeAttr(def.node(a), "T") == t) chain.activation = a;
  return chain;
}

// Replaces node i by replace[i] and drops the nodes in `drop`, then points
// every input naming a key of `renamed` ("node:k") at its value.
void Rewrite(GraphDef* def, std::map<int, NodeDef> replace, const std::set<int>& drop,
             const std::map<std::string, std::string>& renamed) {
  GraphDef out;
  for (int i = 0; i < def->node_size(); ++i) {
    if (drop.count(i)) continue;
    auto it = replace.find(i);
    NodeDef* n = out.add_node();
    *n = it != replace.end() ? std::move(it->second) : std::move(*def->mutable_node(i));
    if (renamed.empty()) continue;
    for (std::string& in : *n->mutable_input()) {
      auto r = renamed.find(in);
      if (r != renamed.end()) in = r->second;
    }
  }
  def->mutable_node()->Swap(out.mutable_node());
}

// The control inputs of `nodes`, sorted and without repeats.
std::vector<std::string> ControlInputs(const std::vector<const NodeDef*>& nodes) {
  std::vector<std::string> controls;
  for (const NodeDef* n : nodes) {
    for (const std::string& in : n->input()) {
      if (in[0] == '^') controls.push_back(in);
    }
  }
  std::sort(controls.begin(), controls.end());
  controls.erase(std::unique(controls.begin(), controls.end()), controls.end());
  return controls;
}

void CopyAttrs(const NodeDef& from, std::initializer_list<const char*> names, NodeDef* to) {
  for (const char* name : names) {
    if (const AttrValue* a = Attr(from, name)) (*to->mutable_attr())[name] = *a;
  }
}

void MarkFused(const std::vector<const NodeDef*>& nodes, NodeDef* fused) {
  AttrValue::ListValue* names = (*fused->mutable_attr())["_fused_nodes"].mutable_list();
  for (const NodeDef* n : nodes) names->add_s(n->name());
}

// The fused node for `chain`, named after its last node.
NodeDef FusedNode(const GraphDef& def, const Chain& chain) {
  const NodeDef& product = def.node(chain.product);
  const NodeDef& affine = def.node(chain.affine);
  const NodeDef& last = def.node(chain.activation >= 0 ? chain.activation : chain.affine);
  const bool conv = product.op() == "Conv2D";
  const bool batch_norm = IsBatchNorm(affine);
  NodeDef fused;
  fused.set_name(last.name());
  fused.set_op(conv ? "_FusedConv2D" : "_FusedMatMul");
  fused.set_device(last.device());
  for (const std::string& in : product.input()) {
    if (in[0] != '^') fused.add_input(in);
  }
  const int num_args = batch_norm ? 4 : 1;
  for (int k = 1; k <= num_args; ++k) fused.add_input(affine.input(k));
  std::vector<const NodeDef*> members = {&product, &affine};
  if (chain.activation >= 0) members.push_back(&last);
  for (const std::string& c : ControlInputs(members)) fused.add_input(c);

  auto& attrs = *fused.mutable_attr();
  for (const auto& [name, value] : product.attr()) {
    if (name == "grad_a" || name == "grad_b" || name[0] == '_') continue;  // not in the schema
    attrs[name] = value;
  }
  attrs["num_args"].set_i(num_args);
  AttrValue::ListValue* ops = attrs["fused_ops"].mutable_list();
  ops->add_s(batch_norm ? "FusedBatchNorm" : "BiasAdd");
  if (chain.activation >= 0) ops->add_s(def.node(chain.activation).op());
  const AttrValue* epsilon = Attr(affine, "epsilon");
  attrs["epsilon"].set_f(batch_norm && epsilon != nullptr ? epsilon->f() : 1e-4f);
  MarkFused(members, &fused);
  return fused;
}

bool IsFloatBatchNorm(const NodeDef& n) {
  return (n.op() == "FusedBatchNormV2" || n.op() == "FusedBatchNormV3") &&
         TypeAttr(n, "T") == DT_FLOAT && TypeAttr(n, "U") == DT_FLOAT;
}

// FusedBatchNorm{V2,V3} whose y only a Relu reads -> _FusedBatchNormEx
// (activation Relu) named after the Relu; readers of the batch norm's other
// outputs read the fused node's, at the same indices.
void FuseBatchNormRelu(const std::string& device_type, const GraphView& view, GraphDef* def) {
  std::map<int, NodeDef> replace;
  std::set<int> drop;
  std::map<std::string, std::string> renamed;
  for (int b = 0; b < def->node_size(); ++b) {
    const NodeDef& bn = def->node(b);
    if (!IsFloatBatchNorm(bn) || view.HasControlConsumers(bn.name())) continue;
    const auto& readers = view.Consumers(bn.name(), 0);
    if (readers.size() != 1 || readers[0].second != 0) continue;
    const NodeDef& relu = def->node(readers[0].first);
    if (relu.op() != "Relu" || TypeAttr(relu, "T") != DT_FLOAT) continue;
    NodeDef fused;
    fused.set_name(relu.name());
    fused.set_op("_FusedBatchNormEx");
    fused.set_device(relu.device());
    for (const std::string& in : bn.input()) {
      if (in[0] != '^') fused.add_input(in);
    }
    for (const std::string& c : ControlInputs({&bn, &relu})) fused.add_input(c);
    CopyAttrs(bn, {"T", "U", "epsilon", "exponential_avg_factor", "data_format", "is_training"},
              &fused);
    (*fused.mutable_attr())["num_side_inputs"].set_i(0);
    (*fused.mutable_attr())["activation_mode"].set_s("Relu");
    MarkFused({&bn, &relu}, &fused);
    if (!FindKernelDef(device_type, fused).ok()) continue;
    for (int k = 1; k <= 5; ++k) {
      renamed[absl::StrCat(bn.name(), ":", k)] = absl::StrCat(relu.name(), ":", k);
    }
    replace[readers[0].first] = std::move(fused);
    drop.insert(b);
  }
  if (!drop.empty()) Rewrite(def, std::move(replace), drop, renamed);
}

// ReluGrad(dy, y) read only by FusedBatchNormGradV3 as y_backprop, y being
// a _FusedBatchNormEx's Relu output and the gradient's x that node's x ->
// _FusedBatchNormGradEx (activation Relu) named after the gradient.
void FuseBatchNormReluGrad(const std::string& device_type, const GraphView& view, GraphDef* def) {
  std::map<int, NodeDef> replace;
  std::set<int> drop;
  for (int g = 0; g < def->node_size(); ++g) {
    const NodeDef& grad = def->node(g);
    if (grad.op() != "FusedBatchNormGradV3" || TypeAttr(grad, "T") != DT_FLOAT ||
        TypeAttr(grad, "U") != DT_FLOAT || grad.input_size() < 6) {
      continue;
    }
    const int rg = ProducerOfOutput0(view, grad.input(0));
    if (rg < 0 || def->node(rg).op() != "ReluGrad" || TypeAttr(def->node(rg), "T") != DT_FLOAT ||
        SoleConsumer(view, def->node(rg)) != g) {
      continue;
    }
    const NodeDef& relu_grad = def->node(rg);
    const int f = ProducerOfOutput0(view, relu_grad.input(1));
    if (f < 0) continue;
    const NodeDef& forward = def->node(f);
    const AttrValue* mode = Attr(forward, "activation_mode");
    if (forward.op() != "_FusedBatchNormEx" || mode == nullptr || mode->s() != "Relu") continue;
    absl::StatusOr<TensorId> x_grad = ParseTensorName(grad.input(1));
    absl::StatusOr<TensorId> x_forward = ParseTensorName(forward.input(0));
    if (!x_grad.ok() || !x_forward.ok() || x_grad->node != x_forward->node ||
        x_grad->index != x_forward->index ||
        StringAttr(grad, "data_format", "NHWC") != StringAttr(forward, "data_format", "NHWC")) {
      continue;
    }
    NodeDef fused;
    fused.set_name(grad.name());
    fused.set_op("_FusedBatchNormGradEx");
    fused.set_device(grad.device());
    fused.add_input(relu_grad.input(0));
    for (int k = 1; k < 6; ++k) fused.add_input(grad.input(k));
    fused.add_input(forward.input(2));  // offset
    fused.add_input(relu_grad.input(1));
    for (const std::string& c : ControlInputs({&relu_grad, &grad})) fused.add_input(c);
    CopyAttrs(grad, {"T", "U", "epsilon", "data_format", "is_training"}, &fused);
    (*fused.mutable_attr())["num_side_inputs"].set_i(0);
    (*fused.mutable_attr())["activation_mode"].set_s("Relu");
    MarkFused({&relu_grad, &grad}, &fused);
    if (!FindKernelDef(device_type, fused).ok()) continue;
    replace[g] = std::move(fused);
    drop.insert(rg);
  }
  if (!drop.empty()) Rewrite(def, std::move(replace), drop, {});
}

// Every product chain, in one scan: chains never share a node (an affine
// node reads one product, an activation one affine node).
void FuseProductChains(const std::string& device_type, const GraphView& view, GraphDef* def) {
  std::map<int, NodeDef> replace;
  std::set<int> drop;
  for (int i = 0; i < def->node_size(); ++i) {
    const std::optional<Chain> chain = MatchChain(view, *def, i);
    if (!chain) continue;
    NodeDef fused = FusedNode(*def, *chain);
    if (!FindKernelDef(device_type, fused).ok()) continue;
    drop.insert(chain->product);
    if (chain->activation >= 0) drop.insert(chain->affine);
    replace[chain->activation >= 0 ? chain->activation : chain->affine] = std::move(fused);
  }
  if (!drop.empty()) Rewrite(def, std::move(replace), drop, {});
}

absl::Status Remap(const std::string& device_type, GraphDef* def) {
  {
    TW_ASSIGN_OR_RETURN(const GraphView view, GraphView::Build(*def));
    FuseProductChains(device_type, view, def);
  }
  // Batch norms left (training, or after something other than a
  // convolution) with their Relus, then their gradients.
  {
    TW_ASSIGN_OR_RETURN(const GraphView view, GraphView::Build(*def));
    FuseBatchNormRelu(device_type, view, def);
  }
  TW_ASSIGN_OR_RETURN(const GraphView view, GraphView::Build(*def));
  FuseBatchNormReluGrad(device_type, view, def);
  return absl::OkStatus();
}

// ---------------------------------------------------------------- pad fusion

// The value of Const node `n`, if it is one.
std::optional<Tensor> ConstValue(const NodeDef& n) {
  const AttrValue* value = Attr(n, "value");
  if (n.op() != "Const" || value == nullptr) return std::nullopt;
  absl::StatusOr<Tensor> t = Tensor::FromProto(value->tensor());
  if (!t.ok()) return std::nullopt;
  return *std::move(t);
}

// The [4, 2] paddings of Const node `n` as int64, if it is one.
std::optional<std::vector<int64_t>> ConstPaddings(const NodeDef& n) {
  const std::optional<Tensor> t = ConstValue(n);
  if (!t || t->dims() != 2 || t->dim_size(0) != 4 || t->dim_size(1) != 2) return std::nullopt;
  std::vector<int64_t> p(8);
  for (int i = 0; i < 8; ++i) {
    if (t->dtype() == DT_INT32) {
      p[i] = t->data<int32_t>()[i];
    } else if (t->dtype() == DT_INT64) {
      p[i] = t->data<int64_t>()[i];
    } else {
      return std::nullopt;
    }
    if (p[i] < 0) return std::nullopt;
  }
  return p;
}

// Whether Const node `n` holds a single zero (PadV2's constant_values).
bool IsScalarZero(const NodeDef& n) {
  const std::optional<Tensor> t = ConstValue(n);
  if (!t || t->NumElements() != 1) return false;
  if (t->dtype() == DT_FLOAT) return t->data<float>()[0] == 0.0f;
  if (t->dtype() == DT_DOUBLE) return t->data<double>()[0] == 0.0;
  return false;
}

bool IsConvReadingPad(const NodeDef& n, int input, const std::string& format) {
  if ((n.op() != "Conv2D" && n.op() != "Conv2DBackpropFilter") || input != 0) return false;
  if (StringAttr(n, "padding", "") != "VALID") return false;
  return StringAttr(n, "data_format", "NHWC") == format;
}

// Fuses the first fusable Pad; false when none is left.
absl::StatusOr<bool> FusePad(GraphDef* def) {
  TW_ASSIGN_OR_RETURN(const GraphView view, GraphView::Build(*def));
  for (int p = 0; p < def->node_size(); ++p) {
    const NodeDef& pad = def->node(p);
    if (pad.op() != "Pad" && pad.op() != "PadV2") continue;
    if (pad.input_size() < 2 || view.HasControlConsumers(pad.name())) continue;
    const int paddings_node = ProducerOfOutput0(view, pad.input(1));
    if (paddings_node < 0) continue;
    const std::optional<std::vector<int64_t>> paddings = ConstPaddings(def->node(paddings_node));
    if (!paddings) continue;
    if (pad.op() == "PadV2") {
      const int zero = pad.input_size() >= 3 ? ProducerOfOutput0(view, pad.input(2)) : -1;
      if (zero < 0 || !IsScalarZero(def->node(zero))) continue;
    }
    const auto& consumers = view.Consumers(pad.name(), 0);
    if (consumers.empty()) continue;
    // Every reader a convolution in one data format (or a Shape), and only
    // the spatial dimensions padded in that format.
    std::string format;
    bool fusable = true;
    for (const auto& [c, input] : consumers) {
      const NodeDef& n = def->node(c);
      if (n.op() == "Shape") continue;
      if (format.empty()) format = StringAttr(n, "data_format", "NHWC");
      fusable = fusable && IsConvReadingPad(n, input, format);
    }
    if (!fusable || format.empty()) continue;
    const std::vector<int64_t>& q = *paddings;
    const int c_dim = format == "NHWC" ? 3 : 1;
    if (q[0] != 0 || q[1] != 0 || q[2 * c_dim] != 0 || q[2 * c_dim + 1] != 0) continue;

    const std::string source = pad.input(0);
    for (const auto& [c, input] : consumers) {
      NodeDef* n = def->mutable_node(c);
      if (n->op() == "Shape") {
        // shape(pad(x)) = shape(x) + the paddings' sums, in Shape's type.
        const DataType out_type = TypeAttr(*n, "out_type") == DT_INT64 ? DT_INT64 : DT_INT32;
        Tensor totals(out_type, TensorShape({4}));
        for (int d = 0; d < 4; ++d) {
          if (out_type == DT_INT64) {
            totals.data<int64_t>()[d] = q[2 * d] + q[2 * d + 1];
          } else {
            totals.data<int32_t>()[d] = static_cast<int32_t>(q[2 * d] + q[2 * d + 1]);
          }
        }
        NodeDef unpadded = *n;
        unpadded.set_name(n->name() + "/_unpadded");
        unpadded.set_input(input, source);
        NodeDef added;
        added.set_name(n->name() + "/_paddings");
        added.set_op("Const");
        added.set_device(n->device());
        (*added.mutable_attr())["dtype"].set_type(out_type);
        *(*added.mutable_attr())["value"].mutable_tensor() = totals.AsProto();
        NodeDef sum;
        sum.set_name(n->name());
        sum.set_op("AddV2");
        sum.set_device(n->device());
        sum.add_input(unpadded.name());
        sum.add_input(added.name());
        for (const std::string& in : n->input()) {
          if (in[0] == '^') sum.add_input(in);
        }
        (*sum.mutable_attr())["T"].set_type(out_type);
        *n = std::move(sum);
        *def->add_node() = std::move(unpadded);
        *def->add_node() = std::move(added);
        continue;
      }
      n->set_input(0, source);
      auto& attrs = *n->mutable_attr();
      attrs["padding"].set_s("EXPLICIT");
      AttrValue::ListValue* explicit_paddings = attrs["explicit_paddings"].mutable_list();
      explicit_paddings->clear_i();
      for (int64_t v : q) explicit_paddings->add_i(v);
    }
    // The Pad keeps its control inputs' meaning through its readers.
    for (const std::string& in : pad.input()) {
      if (in[0] != '^') continue;
      for (const auto& [c, input] : consumers) def->mutable_node(c)->add_input(in);
    }
    // The Pad goes, and so do the constants only it read.
    std::vector<int> gone = {p};
    for (int k = 1; k < pad.input_size(); ++k) {
      const int q = ProducerOfOutput0(view, pad.input(k));
      const std::string& name = q >= 0 ? def->node(q).name() : "";
      if (q >= 0 && view.Consumers(name, 0).size() == 1 && !view.HasControlConsumers(name)) {
        gone.push_back(q);
      }
    }
    std::sort(gone.rbegin(), gone.rend());
    for (int i : gone) def->mutable_node()->DeleteSubrange(i, 1);
    return true;
  }
  return false;
}

}  // namespace

absl::Status OptimizePartition(const GraphOptimizerOptions& options, Device* device,
                               ThreadPool* inter_op_pool, GraphDef* partition) {
  const std::string& device_type = device->device_type();
  // Mixed precision before everything: the folding then folds the casts of
  // constants, and the remapper fuses the 16-bit products.
  TW_RETURN_IF_ERROR(AutoMixedPrecision(options.mixed_precision, device_type, partition));
  // Folding next: what it computes (a bias, paddings) is then a Const the
  // other rewrites can read. It evaluates on the CPU device itself.
  if (options.constant_folding && device_type == kDeviceCpu) {
    TW_RETURN_IF_ERROR(FoldConstants(device, inter_op_pool, partition));
  }
  // Pad fusion next: a padded convolution then remaps like any other.
  // EXPLICIT padding is the CPU kernels' (oneDNN's asymmetric padding).
  if (options.pad_fusion && device_type == kDeviceCpu) {
    for (;;) {
      TW_ASSIGN_OR_RETURN(const bool fused, FusePad(partition));
      if (!fused) break;
    }
  }
  if (options.remapping) TW_RETURN_IF_ERROR(Remap(device_type, partition));
  return absl::OkStatus();
}

}  // namespace towerflow
