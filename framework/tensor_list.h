// TensorList: the value of TF 2's list tensors (TF's tensorflow::TensorList),
// a scalar DT_VARIANT tensor that the TensorList* ops make, read and change:
// control flow v2's loop accumulators, tf.TensorArray inside a tf.function,
// TF 2 Keras RNNs.
//
// A list has an element dtype, an element shape that every element must be
// compatible with (possibly partial or of unknown rank), an optional most
// elements (max_num_elements, -1 for no limit) and its elements. An element
// may be unset (a DT_INVALID Tensor: TensorListReserve's and a resize's new
// elements); a read of one gives zeros of the element shape when that is
// known. Elements share their producers' buffers.
//
// Encode/Decode are TF's serialisation (list_kernels.cc), so a list fetched
// as a TensorProto reads back in TF and the other way round.
//
// Thread-compatible; a list inside a shared tensor is read-only (see
// framework/variant.h).
#ifndef TOWERFLOW_FRAMEWORK_TENSOR_LIST_H_
#define TOWERFLOW_FRAMEWORK_TENSOR_LIST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor_shape.h"
#include "core/types.h"
#include "framework/tensor.h"
#include "framework/variant.h"
#include "proto/tensor.pb.h"

namespace towerflow {

class TensorList : public VariantValue {
 public:
  static constexpr char kTypeName[] = "tensorflow::TensorList";

  TensorList() = default;
  TensorList(DataType element_dtype, PartialTensorShape element_shape)
      : element_dtype(element_dtype), element_shape(std::move(element_shape)) {}

  std::string TypeName() const override { return kTypeName; }
  // "TensorList<float, [2,?], 3 elements>".
  std::string DebugString() const override;
  std::unique_ptr<VariantValue> Clone() const override {
    return std::make_unique<TensorList>(*this);
  }
  void Encode(VariantTensorDataProto* out) const override;
  // InvalidArgument for data TF's Encode could not have written.
  static absl::StatusOr<TensorList> Decode(const VariantTensorDataProto& data);

  DataType element_dtype = DT_INVALID;
  PartialTensorShape element_shape;  // unknown rank unless given
  int64_t max_num_elements = -1;
  std::vector<Tensor> tensors;  // DT_INVALID: not set
};

// The most elements a list may hold: each costs a Tensor's bookkeeping
// (about 64 bytes) before any data, and a size from a GraphDef must not
// exhaust memory on bookkeeping alone (as TensorArray's limit).
inline constexpr int64_t kMaxTensorListElements = int64_t{1} << 24;

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_TENSOR_LIST_H_
