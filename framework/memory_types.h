// Memory types: whether each input and output of a node lives in host memory
// or in the memory of its device.
//
// On CPU devices everything is host memory. On a device with memory of its
// own (a GPU) an argument is host memory when
//  * its type is int32, string or resource (TensorFlow's rule: shapes,
//    indices and handles stay where the host can read them, so a GPU never
//    waits on a copy to learn a shape), or
//  * the node's kernel names it with KernelDefBuilder::HostMemory (Reshape's
//    `shape`, Sum's `reduction_indices`, ...).
// The step graph cuts every edge whose two ends disagree (a _Send/_Recv pair
// on the same device that copies), and the executor allocates host-memory
// outputs on the host.
#ifndef TOWERFLOW_FRAMEWORK_MEMORY_TYPES_H_
#define TOWERFLOW_FRAMEWORK_MEMORY_TYPES_H_

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "framework/device.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"

namespace towerflow {

enum class MemoryType { kDevice, kHost };
using MemoryTypeVector = absl::InlinedVector<MemoryType, 4>;

// Whether a tensor of `dtype` lives in host memory on every device (int32,
// string, resource, variant), whatever its kernel says.
bool AlwaysInHostMemory(DataType dtype);

// Fills `inputs` and `outputs` (either may be null) for `node_def` on
// `device`. Unimplemented when the device has memory of its own and no
// kernel for the node; InvalidArgument when the node's attrs do not fit its
// OpDef.
absl::Status MemoryTypesForNode(const Device& device, const NodeDef& node_def, const OpDef& op_def,
                                MemoryTypeVector* inputs, MemoryTypeVector* outputs);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_MEMORY_TYPES_H_
