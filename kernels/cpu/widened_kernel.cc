#include "kernels/cpu/widened_kernel.h"

#include <map>
#include <set>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/node_def_util.h"
#include "framework/op_def_source.h"

namespace towerflow {
namespace {

class WidenedOp : public OpKernel {
 public:
  explicit WidenedOp(const Widening& widening) : widening_(widening) {}

  absl::Status Init(const KernelConstruction& c) override {
    wide_def_ = c.def();
    for (auto& [name, value] : *wide_def_.mutable_attr()) {
      if (value.value_case() != AttrValue::kType) continue;
      const DataType wide = widening_.wide(value.type());
      if (wide != DT_INVALID) value.set_type(wide);
    }
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
        CreateKernel(c.device(), c.device()->device_type(), wide_def_, c.op_def());
    if (!kernel.ok()) {
      return absl::Status(
          kernel.status().code(),
          absl::StrCat("the CPU computes ", c.def().op(), " on ", widening_.what,
                       " with a wider type's kernel, which failed: ", kernel.status().message()));
    }
    wide_kernel_ = *std::move(kernel);
    if (wide_kernel_->IsAsync()) {
      return absl::UnimplementedError(absl::StrCat(c.def().op(), "'s wider kernel is async"));
    }
    input_types_ = c.input_types();
    output_types_ = c.output_types();
    wide_output_types_ = output_types_;
    for (DataType& t : wide_output_types_) {
      if (widening_.wide(t) != DT_INVALID) t = widening_.wide(t);
    }
    return absl::OkStatus();
  }

  bool IsExpensive() const override { return wide_kernel_->IsExpensive(); }

  absl::Status Compute(KernelContext* ctx) override {
    const auto& d = ctx->eigen_cpu_device();
    const int n = ctx->num_inputs();
    std::vector<Tensor> values(n);
    std::vector<KernelInput> inputs(n);
    for (int i = 0; i < n; ++i) {
      if (!ctx->has_input(i)) continue;
      const Tensor& in = ctx->input(i);
      const DataType wide = widening_.wide(input_types_[i]);
      if (wide != DT_INVALID) {
        TW_ASSIGN_OR_RETURN(values[i], ctx->allocate_temp(wide, in.shape()));
        widening_.convert(d, in, &values[i]);
      } else {
        values[i] = in;
      }
      inputs[i].tensor = &values[i];
    }
    KernelContext::Params params;
    params.def = &wide_def_;
    params.device = ctx->device();
    params.output_types = &wide_output_types_;
    params.inputs = inputs;
    params.rendezvous = ctx->rendezvous();
    params.call_frame = ctx->call_frame();
    params.step_id = ctx->step_id();
    params.run_id = ctx->run_id();
    params.is_input_dead = ctx->is_input_dead();
    KernelContext wide_ctx(params);
    TW_RETURN_IF_ERROR(wide_kernel_->Compute(&wide_ctx));
    for (int o = 0; o < ctx->num_outputs(); ++o) {
      const KernelOutput& out = wide_ctx.outputs()[o];
      if (!out.set) continue;
      if (out.ref != nullptr) {
        return absl::InternalError(absl::StrCat(ctx->op(), "'s wider kernel output a ref"));
      }
      if (widening_.wide(output_types_[o]) == DT_INVALID) {
        TW_RETURN_IF_ERROR(ctx->set_output(o, out.tensor));
        continue;
      }
      TW_ASSIGN_OR_RETURN(Tensor * narrowed, ctx->allocate_output(o, out.tensor.shape()));
      widening_.convert(d, out.tensor, narrowed);
    }
    return absl::OkStatus();
  }

 private:
  const Widening& widening_;
  NodeDef wide_def_;
  std::unique_ptr<OpKernel> wide_kernel_;
  DataTypeVector input_types_, output_types_, wide_output_types_;
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

}  // namespace

void DeriveWidenedKernels(const std::vector<const KernelDef*>& kernels, const Widening& widening,
                          const std::vector<DataType>& narrow,
                          const std::function<bool(const std::string& op)>& derive) {
  std::map<std::string, std::vector<const KernelDef*>> cpu;
  for (const KernelDef* k : kernels) {
    if (k->device_type == kDeviceCpu) cpu[k->op].push_back(k);
  }
  for (const auto& [op, defs] : cpu) {
    if (!derive(op)) continue;
    const OpDef* op_def = FindOpDefFromSource(op);
    if (op_def == nullptr || !TakesValuesOnly(*op_def)) continue;
    std::set<std::string> made;
    for (const KernelDef* k : defs) {
      for (const auto& [attr, allowed] : k->type_constraints) {
        for (DataType dtype : narrow) {
          if (!absl::c_linear_search(allowed, widening.wide(dtype))) continue;
          if (!Allows(*op_def, attr, dtype) || AnyKernelTakes(defs, attr, dtype)) continue;
          KernelDefBuilder derived(op);
          derived.Device(kDeviceCpu).TypeConstraint(attr, dtype);
          for (const auto& [other, types] : k->type_constraints) {
            if (other == attr) continue;
            for (DataType t : types) derived.TypeConstraint(other, t);
          }
          if (!made.insert(derived.def().DebugString()).second) continue;
          RegisterKernel(derived, [&widening] { return std::make_unique<WidenedOp>(widening); });
        }
      }
    }
  }
}

}  // namespace towerflow
