// Tensors whose buffer was filled with raw bytes from outside (a
// TensorProto's tensor_content, a checkpoint's data file, a .npy file).
#ifndef TOWERFLOW_FRAMEWORK_RAW_BYTES_H_
#define TOWERFLOW_FRAMEWORK_RAW_BYTES_H_

#include "framework/tensor.h"

namespace towerflow {

// For a bool tensor, makes every nonzero byte 1 (true); other dtypes are left
// as they are. A bool object holding another byte is undefined behaviour in
// C++ (UBSan: "load of value 32, which is not a valid value for type
// 'bool'", found by fuzz/tensor_proto), and any nonzero byte means true.
void NormalizeBoolBytes(Tensor* t);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_RAW_BYTES_H_
