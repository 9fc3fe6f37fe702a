// The CPU's half and bfloat16 kernels: each float kernel, with the 16-bit
// inputs widened to float and the float results rounded back.
//
// Note [16-bit floats on the CPU]
// A CPU has no 16-bit arithmetic worth the name: Eigen's half and bfloat16
// operators widen to float, compute and round, one element at a time. So
// the CPU computes half and bfloat16 nodes in float32, at the width of its
// SIMD and BLAS paths: a derived kernel (Note [Derived kernels] in
// framework/kernel_registry.h) converts each 16-bit input to float with
// vectorised conversions (float16_convert.h), runs the op's float kernel on the node
// with its 16-bit type attrs made float, and rounds each 16-bit output to
// nearest even. As XLA's CPU backend does (it normalises bf16 to f32).
// - Elementwise arithmetic (+ - * /, sqrt) gives TensorFlow's result bit for
//   bit: float carries more than twice the bits of either 16-bit type, so
//   rounding its result once is the correctly rounded 16-bit result, and
//   Eigen's half operators (TF's CPU kernels) round the same float value.
// - Reductions, GEMMs, convolutions, batch norm, softmax and the losses
//   accumulate in float32, as TensorFlow's GPU kernels do for 16-bit types
//   (its CPU kernels round some intermediates to 16 bits, so they can be
//   less accurate than this).
// - Every op whose float kernel exists gets its 16-bit forms, where its
//   schema allows them and no kernel takes them already (Cast, ZerosLike and
//   the data-movement kernels are written for every type). Not derived: ops
//   that read or update a variable in place (ref or resource arguments: the
//   optimizer updates and Assign are written for the 16-bit types in their
//   own files), list(type) attrs, ops whose meaning is the bits and
//   the stateless random ops (NotDerivedOps).
// The derived kernel is as thread-safe as the float one it holds.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "core/float16.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/node_def_util.h"
#include "framework/op_def_source.h"
#include "framework/tensor_views.h"
#include "kernels/cpu/float16_convert.h"

namespace towerflow {
namespace {

bool IsFloat16(DataType t) { return t == DT_HALF || t == DT_BFLOAT16; }

// Ops whose 16-bit result is not the float result rounded: those whose
// meaning is how a type is stored, and the stateless random ops (TF's make
// 16-bit numbers from 16 random bits; a rounded float draw would be other
// numbers, and could round up to 1).
const std::set<std::string>& NotDerivedOps() {
  static const auto* ops = new std::set<std::string>{"Bitcast",
                                                     "DecodeRaw",
                                                     "ParseTensor",
                                                     "SerializeTensor",
                                                     "StatelessRandomUniform",
                                                     "StatelessRandomUniformV2",
                                                     "StatelessRandomNormal",
                                                     "StatelessRandomNormalV2",
                                                     "StatelessTruncatedNormal",
                                                     "StatelessTruncatedNormalV2"};
  return *ops;
}

DataTypeVector Widened(const DataTypeVector& types) {
  DataTypeVector out = types;
  for (DataType& t : out) {
    if (IsFloat16(t)) t = DT_FLOAT;
  }
  return out;
}

class Float16ViaFloatOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    float_def_ = c.def();
    for (auto& [name, value] : *float_def_.mutable_attr()) {
      if (value.value_case() == AttrValue::kType && IsFloat16(value.type())) {
        value.set_type(DT_FLOAT);
      }
    }
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
        CreateKernel(c.device(), c.device()->device_type(), float_def_, c.op_def());
    if (!kernel.ok()) {
      return absl::Status(kernel.status().code(),
                          absl::StrCat("the CPU computes ", c.def().op(),
                                       " on 16-bit floats with its float kernel, which failed: ",
                                       kernel.status().message()));
    }
    float_kernel_ = *std::move(kernel);
    if (float_kernel_->IsAsync()) {
      return absl::UnimplementedError(absl::StrCat(c.def().op(), "'s float kernel is async"));
    }
    input_types_ = c.input_types();
    output_types_ = c.output_types();
    float_output_types_ = Widened(output_types_);
    return absl::OkStatus();
  }

  bool IsExpensive() const override { return float_kernel_->IsExpensive(); }

  absl::Status Compute(KernelContext* ctx) override {
    const auto& d = ctx->eigen_cpu_device();
    const int n = ctx->num_inputs();
    std::vector<Tensor> values(n);
    std::vector<KernelInput> inputs(n);
    for (int i = 0; i < n; ++i) {
      if (!ctx->has_input(i)) continue;
      const Tensor& in = ctx->input(i);
      if (IsFloat16(input_types_[i])) {
        TW_ASSIGN_OR_RETURN(values[i], ctx->allocate_temp(DT_FLOAT, in.shape()));
        ConvertFloat16(d, in, &values[i]);
      } else {
        values[i] = in;
      }
      inputs[i].tensor = &values[i];
    }
    KernelContext::Params params;
    params.def = &float_def_;
    params.device = ctx->device();
    params.output_types = &float_output_types_;
    params.inputs = inputs;
    params.rendezvous = ctx->rendezvous();
    params.call_frame = ctx->call_frame();
    params.step_id = ctx->step_id();
    params.run_id = ctx->run_id();
    params.is_input_dead = ctx->is_input_dead();
    KernelContext float_ctx(params);
    TW_RETURN_IF_ERROR(float_kernel_->Compute(&float_ctx));
    for (int o = 0; o < ctx->num_outputs(); ++o) {
      const KernelOutput& out = float_ctx.outputs()[o];
      if (!out.set) continue;
      if (out.ref != nullptr) {
        return absl::InternalError(absl::StrCat(ctx->op(), "'s float kernel output a ref"));
      }
      if (!IsFloat16(output_types_[o])) {
        TW_RETURN_IF_ERROR(ctx->set_output(o, out.tensor));
        continue;
      }
      TW_ASSIGN_OR_RETURN(Tensor * rounded, ctx->allocate_output(o, out.tensor.shape()));
      ConvertFloat16(d, out.tensor, rounded);
    }
    return absl::OkStatus();
  }

 private:
  NodeDef float_def_;
  std::unique_ptr<OpKernel> float_kernel_;
  DataTypeVector input_types_, output_types_, float_output_types_;
};

// Whether the op's arguments are all values (no refs, no resources).
bool TakesValuesOnly(const OpDef& op_def) {
  const auto is_value = [](const OpDef::ArgDef& a) {
    return !a.is_ref() && a.type() != DT_RESOURCE && a.type_list_attr().empty();
  };
  return absl::c_all_of(op_def.input_arg(), is_value) &&
         absl::c_all_of(op_def.output_arg(), is_value);
}

// Whether the `type` attr `name` of the schema allows `dtype`.
bool Allows(const OpDef& op_def, const std::string& name, DataType dtype) {
  for (const OpDef::AttrDef& a : op_def.attr()) {
    if (a.name() != name) continue;
    if (a.type() != "type") return false;
    if (!a.has_allowed_values()) return true;
    return absl::c_linear_search(a.allowed_values().list().type(), dtype);
  }
  return false;
}

void DeriveFloat16Kernels(const std::vector<const KernelDef*>& kernels) {
  std::map<std::string, std::vector<const KernelDef*>> cpu;
  for (const KernelDef* k : kernels) {
    if (k->device_type == kDeviceCpu) cpu[k->op].push_back(k);
  }
  for (const auto& [op, defs] : cpu) {
    if (NotDerivedOps().count(op) > 0) continue;
    const OpDef* op_def = FindOpDefFromSource(op);
    if (op_def == nullptr || !TakesValuesOnly(*op_def)) continue;
    std::set<std::string> made;
    for (const KernelDef* k : defs) {
      for (const auto& [attr, allowed] : k->type_constraints) {
        if (!absl::c_linear_search(allowed, DT_FLOAT)) continue;
        for (DataType dtype : {DT_HALF, DT_BFLOAT16}) {
          if (!Allows(*op_def, attr, dtype) || AnyKernelTakes(defs, attr, dtype)) continue;
          KernelDefBuilder derived(op);
          derived.Device(kDeviceCpu).TypeConstraint(attr, dtype);
          for (const auto& [other, types] : k->type_constraints) {
            if (other == attr) continue;
            for (DataType t : types) derived.TypeConstraint(other, t);
          }
          if (!made.insert(derived.def().DebugString()).second) continue;
          RegisterKernel(derived, MakeFactory<Float16ViaFloatOp>());
        }
      }
    }
  }
}

TW_REGISTER_KERNELS(float16_kernels) { RegisterKernelDeriver(&DeriveFloat16Kernels); }

}  // namespace
}  // namespace towerflow
