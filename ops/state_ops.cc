// Variables: TF1 reference variables (VariableV2, Assign, Scatter*) and
// resource variables (VarHandleOp, ReadVariableOp, AssignVariableOp, ...).
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status VariableShape(InferenceContext* c) {
  PartialTensorShape shape;
  TW_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  c->set_output(0, shape);
  return absl::OkStatus();
}

// Output 0 (a ref) has the merged shape of the ref and the value.
absl::Status AssignShape(InferenceContext* c) {
  bool validate = true;
  if (c->node_def().attr().contains("validate_shape")) {
    TW_RETURN_IF_ERROR(c->GetAttr("validate_shape", &validate));
  }
  if (!validate) {
    c->set_output(0, c->input(1));
    return absl::OkStatus();
  }
  PartialTensorShape merged;
  const absl::Status s = c->Merge(c->input(0), c->input(1), &merged);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Cannot assign a value of shape ", c->input(1).DebugString(),
                     " to a variable of shape ", c->input(0).DebugString()));
  }
  c->set_output(0, merged);
  return absl::OkStatus();
}

absl::Status ReadVariableShape(InferenceContext* c) {
  PartialTensorShape handle;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &handle));
  if (c->input_handle_shape(0).has_value()) c->set_output(0, *c->input_handle_shape(0));
  return absl::OkStatus();
}

// Resource updates: the handle is a scalar; the value must fit the variable.
absl::Status AssignVariableShape(InferenceContext* c) {
  PartialTensorShape handle;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &handle));
  const auto& var_shape = c->input_handle_shape(0);
  if (var_shape.has_value() && !var_shape->IsCompatibleWith(c->input(1))) {
    bool validate = true;
    if (c->node_def().attr().contains("validate_shape")) {
      TW_RETURN_IF_ERROR(c->GetAttr("validate_shape", &validate));
    }
    // AssignVariableOp may reshape a variable unless told to validate.
    if (validate || c->node_def().op() != "AssignVariableOp") {
      return absl::InvalidArgumentError(
          absl::StrCat("Cannot assign a value of shape ", c->input(1).DebugString(),
                       " to a variable of shape ", var_shape->DebugString()));
    }
  }
  return absl::OkStatus();
}

// params[0] replaced by the indices' shape.
absl::Status ResourceGatherShape(InferenceContext* c) {
  int64_t batch_dims;
  TW_RETURN_IF_ERROR(c->GetAttr("batch_dims", &batch_dims));
  const auto& params = c->input_handle_shape(0);
  const PartialTensorShape& indices = c->input(1);
  if (!params.has_value() || params->unknown_rank() || indices.unknown_rank()) {
    return absl::OkStatus();
  }
  if (batch_dims < 0 || batch_dims > indices.dims() || batch_dims >= params->dims()) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_dims ", batch_dims, " is out of range for params ",
                     params->DebugString(), " and indices ", indices.DebugString()));
  }
  std::vector<int64_t> dims(params->dim_sizes().begin(), params->dim_sizes().begin() + batch_dims);
  dims.insert(dims.end(), indices.dim_sizes().begin() + batch_dims, indices.dim_sizes().end());
  dims.insert(dims.end(), params->dim_sizes().begin() + batch_dims + 1, params->dim_sizes().end());
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// Scatter into `var`: updates.shape == indices.shape + var.shape[1:].
absl::Status CheckScatter(InferenceContext* c, const std::optional<PartialTensorShape>& var) {
  const PartialTensorShape& indices = c->input(1);
  const PartialTensorShape& updates = c->input(2);
  if (!var.has_value() || var->unknown_rank() || indices.unknown_rank() || updates.unknown_rank() ||
      var->dims() == 0) {
    return absl::OkStatus();
  }
  const PartialTensorShape want =
      indices.Concatenate(PartialTensorShape(var->dim_sizes().subspan(1)));
  if (!updates.IsCompatibleWith(want) && updates.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("updates must have shape indices.shape + var.shape[1:] = ", want.DebugString(),
                     " (or be a scalar), got ", updates.DebugString()));
  }
  return absl::OkStatus();
}

absl::Status ScatterShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScatter(c, c->input(0)));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status ResourceScatterShape(InferenceContext* c) {
  PartialTensorShape handle;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &handle));
  return CheckScatter(c, c->input_handle_shape(0));
}

// Scatter<Mode>(ref, indices, updates), or (`nd`) ScatterNd<Mode>, whose
// indices [..., D] address the first D dims of the variable (updates:
// indices.shape[:-1] + ref.shape[D:]).
void RegisterScatter(const char* name, const char* types, const char* locking, const char* doc,
                     bool nd = false) {
  OpDefBuilder b(name, __FILE__);
  b.Input("ref: Ref(T)")
      .Input("indices: Tindices")
      .Input("updates: T")
      .Output("output_ref: Ref(T)")
      .Attr(absl::StrCat("T: ", types))
      .Attr("Tindices: {int32, int64}")
      .Attr(absl::StrCat("use_locking: bool = ", locking))
      .Doc(doc);
  if (nd) {
    b.AttrAddedAfterTF1("bad_indices_policy: string = ''").SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->input(0));
      return absl::OkStatus();
    });
  } else {
    b.SetShapeFn(ScatterShape);
  }
  RegisterOp(b);
}

void RegisterResourceScatter(const char* name, const char* types, const char* doc) {
  RegisterOp(OpDefBuilder(name, __FILE__)
                 .Input("resource: resource")
                 .Input("indices: Tindices")
                 .Input("updates: dtype")
                 .Attr(absl::StrCat("dtype: ", types))
                 .Attr("Tindices: {int32, int64}")
                 .SetIsStateful()
                 .Doc(doc)
                 .SetShapeFn(ResourceScatterShape));
}

void RegisterResourceAssign(const char* name, const char* types, const char* doc) {
  OpDefBuilder b(name, __FILE__);
  b.Input("resource: resource")
      .Input("value: dtype")
      .Attr(absl::StrCat("dtype: ", types))
      .SetIsStateful()
      .Doc(doc)
      .SetShapeFn(AssignVariableShape);
  if (std::string(name) == "AssignVariableOp") {
    b.AttrAddedAfterTF1("validate_shape: bool = false");
  }
  RegisterOp(b);
}

void RegisterResourceScatterNd(const char* name, const char* doc) {
  RegisterOp(OpDefBuilder(name, __FILE__)
                 .Input("ref: resource")
                 .Input("indices: Tindices")
                 .Input("updates: T")
                 .Attr("T: type")
                 .Attr("Tindices: {int32, int64}")
                 .Attr("use_locking: bool = true")
                 .AttrAddedAfterTF1("bad_indices_policy: string = ''")
                 .SetIsStateful()
                 .Doc(doc)
                 .SetShapeFn([](InferenceContext* c) {
                   PartialTensorShape handle;
                   return c->WithRank(c->input(0), 0, &handle);
                 }));
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* name : {"VariableV2", "Variable"}) {
    RegisterOp(OpDefBuilder(name, __FILE__)
                   .Output("ref: Ref(dtype)")
                   .Attr("shape: shape")
                   .Attr("dtype: type")
                   .Attr("container: string = ''")
                   .Attr("shared_name: string = ''")
                   .SetIsStateful()
                   .Doc("A TF1 reference variable.")
                   .SetShapeFn(VariableShape));
  }
  RegisterScatter("ScatterAdd", "numbertype", "false", "ref[indices] += updates");
  RegisterScatter("ScatterSub", "numbertype", "false", "ref[indices] -= updates");
  RegisterScatter("ScatterUpdate", "type", "true", "ref[indices] = updates");
  RegisterResourceScatter("ResourceScatterAdd", "numbertype", "var[indices] += updates");
  RegisterResourceScatter("ResourceScatterSub", "numbertype", "var[indices] -= updates");
  RegisterResourceScatter("ResourceScatterUpdate", "type", "var[indices] = updates");
  constexpr char kOrdered[] = "{half, bfloat16, float, double, int32, int64}";
  RegisterScatter("ScatterMul", "numbertype", "false", "ref[indices] *= updates");
  RegisterScatter("ScatterDiv", "numbertype", "false", "ref[indices] /= updates");
  RegisterScatter("ScatterMax", kOrdered, "false", "ref[indices] = max(ref[indices], updates)");
  RegisterScatter("ScatterMin", kOrdered, "false", "ref[indices] = min(ref[indices], updates)");
  RegisterResourceScatter("ResourceScatterMul", "numbertype", "var[indices] *= updates");
  RegisterResourceScatter("ResourceScatterDiv", "numbertype", "var[indices] /= updates");
  RegisterResourceScatter("ResourceScatterMax", "numbertype",
                          "var[indices] = max(var[indices], updates)");
  RegisterResourceScatter("ResourceScatterMin", "numbertype",
                          "var[indices] = min(var[indices], updates)");
  RegisterScatter("ScatterNdUpdate", "type", "true", "ref[indices] = updates, N-d indices",
                  /*nd=*/true);
  RegisterScatter("ScatterNdAdd", "numbertype", "false", "ref[indices] += updates, N-d indices",
                  /*nd=*/true);
  RegisterScatter("ScatterNdSub", "numbertype", "false", "ref[indices] -= updates, N-d indices",
                  /*nd=*/true);
  RegisterScatter("ScatterNdMax", "numbertype", "false",
                  "ref[indices] = max(ref[indices], updates), N-d indices", /*nd=*/true);
  RegisterScatter("ScatterNdMin", "numbertype", "false",
                  "ref[indices] = min(ref[indices], updates), N-d indices", /*nd=*/true);
  RegisterResourceScatterNd("ResourceScatterNdUpdate", "var[indices] = updates, N-d indices");
  RegisterResourceScatterNd("ResourceScatterNdAdd", "var[indices] += updates, N-d indices");
  RegisterResourceScatterNd("ResourceScatterNdSub", "var[indices] -= updates, N-d indices");
  RegisterResourceScatterNd("ResourceScatterNdMax",
                            "var[indices] = max(var[indices], updates), N-d indices");
  RegisterResourceScatterNd("ResourceScatterNdMin",
                            "var[indices] = min(var[indices], updates), N-d indices");
  RegisterResourceAssign("AssignVariableOp", "type", "var = value");
  RegisterResourceAssign("AssignAddVariableOp", "type", "var += value");
  RegisterResourceAssign("AssignSubVariableOp", "type", "var -= value");
  return true;
}();

TW_REGISTER_OP("Assign")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: type")
    .Attr("validate_shape: bool = true")
    .Attr("use_locking: bool = true")
    .SetAllowsUninitializedInput()
    .Doc("ref = value")
    .SetShapeFn(AssignShape);

TW_REGISTER_OP("AssignAdd")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: numbertype")
    .Attr("use_locking: bool = false")
    .Doc("ref += value")
    .SetShapeFn(AssignShape);

TW_REGISTER_OP("AssignSub")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: numbertype")
    .Attr("use_locking: bool = false")
    .Doc("ref -= value")
    .SetShapeFn(AssignShape);

TW_REGISTER_OP("IsVariableInitialized")
    .Input("ref: Ref(dtype)")
    .Output("is_initialized: bool")
    .Attr("dtype: type")
    .SetAllowsUninitializedInput()
    .Doc("Whether the reference variable holds a value.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("VarHandleOp")
    .Output("resource: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .AttrAddedAfterTF1("debug_name: string = ''")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .AttrAddedAfterTF1("allowed_devices: list(string) = []")
    .SetIsStateful()
    .Doc("A handle to a resource variable.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("ReadVariableOp")
    .Input("resource: resource")
    .Output("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .Doc("The value of a resource variable.")
    .SetShapeFn(ReadVariableShape);

TW_REGISTER_OP("CountUpTo")
    .Input("ref: Ref(T)")
    .Output("output: T")
    .Attr("limit: int")
    .Attr("T: {int32, int64}")
    .Doc("Increments ref until it reaches limit (OutOfRange then); the value before.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &scalar));
      c->set_output(0, scalar);
      return absl::OkStatus();
    });

TW_REGISTER_OP("ResourceCountUpTo")
    .Input("resource: resource")
    .Output("output: T")
    .Attr("limit: int")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .Doc("CountUpTo of a resource variable.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialTensorShape({}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("VariableShape")
    .Input("input: resource")
    .Output("output: out_type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetIsStateful()
    .Doc("The shape of the resource variable's value (TF's gradients of reads in a loop).")
    .SetShapeFn([](InferenceContext* c) {
      const std::optional<PartialTensorShape>& value = c->input_handle_shape(0);
      c->set_output(0, PartialTensorShape({value ? value->dims() : -1}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("VarIsInitializedOp")
    .Input("resource: resource")
    .Output("is_initialized: bool")
    .SetIsStateful()
    .Doc("Whether the resource variable holds a value.")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("DisableCopyOnRead")
    .Input("resource: resource")
    .SetIsStateful()
    .Doc(
        "Turns off copy-on-read for the variable (TF 2's save functions run it first). "
        "Towerflow's variables have no copy-on-read mode: it checks that the variable exists.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("DestroyResourceOp")
    .Input("resource: resource")
    .Attr("ignore_lookup_error: bool = true")
    .SetIsStateful()
    .Doc("Deletes the resource behind a handle.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("ResourceGather")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Output("output: dtype")
    .AttrAddedAfterTF1("batch_dims: int = 0")
    .Attr("validate_indices: bool = true")
    .Attr("dtype: type")
    .Attr("Tindices: {int32, int64}")
    .SetIsStateful()
    .Doc("Gathers rows of a resource variable.")
    .SetShapeFn(ResourceGatherShape);

}  // namespace
}  // namespace towerflow
