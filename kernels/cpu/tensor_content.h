// A tensor as TF's Tensor::AsProtoTensorContent writes it: the elements of
// a fixed-size dtype as raw little-endian bytes in tensor_content (what
// SerializeTensor and TensorSummary emit), strings, resources and variants
// in their *_val fields. Tensor::AsProto keeps some dtypes in *_val fields,
// as TF's AsProtoField.
#ifndef TOWERFLOW_KERNELS_CPU_TENSOR_CONTENT_H_
#define TOWERFLOW_KERNELS_CPU_TENSOR_CONTENT_H_

#include <string>

#include "framework/tensor.h"
#include "proto/tensor.pb.h"

namespace towerflow {

inline TensorProto AsProtoTensorContent(const Tensor& t) {
  if (t.dtype() == DT_STRING || t.dtype() == DT_RESOURCE || t.dtype() == DT_VARIANT) {
    return t.AsProto();
  }
  TensorProto p;
  p.set_dtype(t.dtype());
  t.shape().AsProto(p.mutable_tensor_shape());
  if (t.NumElements() > 0) {
    p.set_tensor_content(std::string(static_cast<const char*>(t.raw_data()), t.TotalBytes()));
  }
  return p;
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_TENSOR_CONTENT_H_
