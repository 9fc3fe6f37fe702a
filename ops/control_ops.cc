// Control and communication ops: NoOp (a node to hang control dependencies
// on) and the Send/Recv pairs the partitioner puts on edges that cross
// devices.
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

TW_REGISTER_OP("NoOp")
    .Doc("Does nothing; a place for control dependencies.")
    .SetShapeFn(shape_fns::UnknownShape);

}  // namespace
}  // namespace towerflow
