// The value held by a DT_RESOURCE tensor: which resource, on which device.
//
// A VarHandleOp produces a scalar DT_RESOURCE tensor whose element is a
// ResourceHandle; ReadVariableOp and friends look the resource up in the
// ResourceMgr of `device` under (container, name). Converts to and from TF's
// ResourceHandleProto so handles can be fetched and printed.
//
// A plain value type; thread-compatible.
#ifndef TOWERFLOW_FRAMEWORK_RESOURCE_HANDLE_H_
#define TOWERFLOW_FRAMEWORK_RESOURCE_HANDLE_H_

#include <string>

#include "proto/resource_handle.pb.h"

namespace towerflow {

struct ResourceHandle {
  std::string device;     // full device name of the owning ResourceMgr
  std::string container;  // "localhost" unless the op names another
  std::string name;       // shared_name, or the node name when that is empty
  std::string type_name;  // "Var" for variables (messages only)

  ResourceHandleProto ToProto() const;
  static ResourceHandle FromProto(const ResourceHandleProto& proto);
  // "localhost/w" — how messages name a resource.
  std::string DebugString() const { return container + "/" + name; }
};

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_RESOURCE_HANDLE_H_
