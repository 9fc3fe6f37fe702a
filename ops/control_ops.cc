// Control and communication ops: NoOp (a node to hang control dependencies
// on), TensorFlow 1.x's control-flow primitives (Switch, Merge, Enter, Exit,
// NextIteration, LoopCond, ControlTrigger; the executor gives them their
// meaning, runtime/executor.cc Note [Control flow]) and the Send/Recv pairs
// the partitioner puts on edges that cross devices.
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

// The attrs every Send and Recv variant carries: which edge (tensor_name)
// between which devices.
OpDefBuilder WithTransferAttrs(OpDefBuilder b) {
  b.Attr("tensor_name: string")
      .Attr("send_device: string")
      .Attr("send_device_incarnation: int")
      .Attr("recv_device: string")
      .Attr("client_terminated: bool = false")
      .SetIsStateful()
      .SetShapeFn(shape_fns::UnknownShape);
  return b;
}

void RegisterSend(const char* name, const char* doc) {
  RegisterOp(
      WithTransferAttrs(OpDefBuilder(name, __FILE__).Input("tensor: T").Attr("T: type")).Doc(doc));
}

void RegisterRecv(const char* name, const char* doc) {
  RegisterOp(
      WithTransferAttrs(
          OpDefBuilder(name, __FILE__).Output("tensor: tensor_type").Attr("tensor_type: type"))
          .Doc(doc));
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterSend("_Send", "Sends a tensor to recv_device (inserted by the partitioner).");
  RegisterRecv("_Recv", "Receives a tensor from send_device (inserted by the partitioner).");
  RegisterSend("_HostSend", "_Send of a tensor in host memory.");
  RegisterRecv("_HostRecv", "_Recv into host memory.");
  RegisterSend("Send", "Sends a tensor to recv_device.");
  RegisterRecv("Recv", "Receives a tensor from send_device.");
  return true;
}();

// The session's feeds and fetches inside a partition graph (TF's function
// call-frame ops): _Arg produces feed `index`, _Retval stores fetch `index`.
TW_REGISTER_OP("_Arg")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .Doc("Feed `index` of the current Session::Run (inserted by the session).")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("_Retval")
    .Input("input: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .Doc("Fetch `index` of the current Session::Run (inserted by the session).")
    .SetShapeFn(shape_fns::UnknownShape);

// The shape in the node's "_output_shapes" attr (TF's convention for a
// shape known from elsewhere), else unknown: a replayed step's feed has
// the shape of its slot.
absl::Status DeviceArgShape(InferenceContext* c) {
  std::vector<PartialTensorShape> shapes;
  if (c->GetAttr("_output_shapes", &shapes).ok() && shapes.size() == 1) {
    c->set_output(0, shapes[0]);
    return absl::OkStatus();
  }
  return shape_fns::UnknownShape(c);
}

// A replayed step's check of a shape it folded into a constant
// (runtime/capture_specializer.h): fails unless `input` has `shape` when the
// step is recorded.
TW_REGISTER_OP("_AssertShape")
    .Input("input: T")
    .Attr("T: type")
    .Attr("shape: shape")
    .SetIsStateful()
    .Doc("Fails unless `input` has `shape` (a recorded step's folded shape, checked).")
    .SetShapeFn(shape_fns::UnknownShape);

// The same in a replayed step (runtime/step_replay.h): feed `index` is
// already in the device's memory, and the fetch stays there.
TW_REGISTER_OP("_DeviceArg")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .Doc("Feed `index`, already in the device's memory (a replayed step's feed slot).")
    .SetShapeFn(DeviceArgShape);

TW_REGISTER_OP("_DeviceRetval")
    .Input("input: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .Doc("Fetch `index`, left in the device's memory (a replayed step's fetch slot).")
    .SetShapeFn(shape_fns::UnknownShape);

// Both outputs have data's shape; pred must be a scalar.
absl::Status SwitchShape(InferenceContext* c) {
  PartialTensorShape pred;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &pred));
  c->set_output(0, c->input(0));
  c->set_output(1, c->input(0));
  return absl::OkStatus();
}

// TensorFlow's MergeShape: the inputs' common rank, with each dimension
// known where all inputs agree on it; unknown when the ranks differ.
absl::Status MergeShape(InferenceContext* c) {
  PartialTensorShape out = c->input(0);
  for (int i = 1; i < c->num_inputs() && !out.unknown_rank(); ++i) {
    const PartialTensorShape& in = c->input(i);
    if (in.unknown_rank() || in.dims() != out.dims()) {
      out = PartialTensorShape();
      break;
    }
    std::vector<int64_t> dims(out.dims());
    for (int d = 0; d < out.dims(); ++d) {
      dims[d] = out.dim_size(d) == in.dim_size(d) ? out.dim_size(d) : -1;
    }
    TW_ASSIGN_OR_RETURN(out, PartialTensorShape::FromDims(dims));
  }
  c->set_output(0, std::move(out));
  c->set_output(1, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

absl::Status LoopCondShape(InferenceContext* c) {
  PartialTensorShape in;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &in));
  c->set_output(0, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

void RegisterSwitch(const char* name, const char* type, const char* doc) {
  RegisterOp(OpDefBuilder(name, __FILE__)
                 .Input(absl::StrCat("data: ", type))
                 .Input("pred: bool")
                 .Output(absl::StrCat("output_false: ", type))
                 .Output(absl::StrCat("output_true: ", type))
                 .Attr("T: type")
                 .Doc(doc)
                 .SetShapeFn(SwitchShape));
}

void RegisterMerge(const char* name, bool ref, const char* doc) {
  RegisterOp(OpDefBuilder(name, __FILE__)
                 .Input(ref ? "inputs: Ref(N * T)" : "inputs: N * T")
                 .Output(ref ? "output: Ref(T)" : "output: T")
                 .Output("value_index: int32")
                 .Attr("T: type")
                 .Attr("N: int >= 1")
                 .Doc(doc)
                 .SetShapeFn(MergeShape));
}

// Enter, Exit and NextIteration and their Ref forms: data in, the same out.
void RegisterForward(const char* name, const char* type, bool enter, const char* doc) {
  OpDefBuilder b(name, __FILE__);
  b.Input(absl::StrCat("data: ", type)).Output(absl::StrCat("output: ", type)).Attr("T: type");
  if (enter) {
    b.Attr("frame_name: string")
        .Attr("is_constant: bool = false")
        .Attr("parallel_iterations: int = 10");
  }
  RegisterOp(b.Doc(doc).SetShapeFn(shape_fns::UnchangedShape));
}

[[maybe_unused]] const bool kControlFlowRegistered = [] {
  RegisterSwitch("Switch", "T",
                 "Forwards data to output_true when pred is true, else to output_false; the "
                 "other output is dead.");
  RegisterSwitch("RefSwitch", "Ref(T)", "Switch of a ref (a variable).");
  RegisterMerge("Merge", false,
                "Forwards the first of its inputs to arrive alive, and its index; dead when "
                "all inputs are dead.");
  RegisterMerge("RefMerge", true, "Merge of refs.");
  RegisterForward("Enter", "T", true,
                  "Makes data available in the child frame frame_name (a while loop): in "
                  "iteration 0, or in every iteration when is_constant; at most "
                  "parallel_iterations iterations of the frame run at once.");
  RegisterForward("RefEnter", "Ref(T)", true, "Enter of a ref.");
  RegisterForward("Exit", "T", false, "Makes data available to the parent frame.");
  RegisterForward("RefExit", "Ref(T)", false, "Exit of a ref.");
  RegisterForward("NextIteration", "T", false,
                  "Makes data available to the next iteration of the frame.");
  RegisterForward("RefNextIteration", "Ref(T)", false, "NextIteration of a ref.");
  return true;
}();

TW_REGISTER_OP("LoopCond")
    .Input("input: bool")
    .Output("output: bool")
    .Doc("Forwards the loop's predicate to the Switches that end or continue an iteration.")
    .SetShapeFn(LoopCondShape);

TW_REGISTER_OP("ControlTrigger")
    .Doc(
        "Does nothing, and is never dead: a place for control edges from either side of a "
        "Switch.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("NoOp")
    .Doc("Does nothing; a place for control dependencies.")
    .SetShapeFn(shape_fns::UnknownShape);

}  // namespace
}  // namespace towerflow
