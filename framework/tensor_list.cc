#include "framework/tensor_list.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace towerflow {

std::string Variant::DebugString() const {
  return value_ ? value_->DebugString() : std::string("[empty variant]");
}

VariantTensorDataProto Variant::Encode() const {
  VariantTensorDataProto out;
  if (value_) value_->Encode(&out);
  return out;
}

std::string TensorList::DebugString() const {
  return absl::StrCat("TensorList<", DataTypeString(element_dtype), ", ",
                      element_shape.DebugString(), ", ", tensors.size(), " elements>");
}

// Note [TensorList's encoding]
// TF's TensorList::Encode: the set elements as `tensors`, in order, and as
// `metadata` varints: the number of unset elements, their indices, the
// element dtype, max_num_elements (as an unsigned 64-bit number, so -1 is
// 2^64 - 1), then the element shape's TensorShapeProto bytes to the end.
void TensorList::Encode(VariantTensorDataProto* out) const {
  out->set_type_name(kTypeName);
  std::vector<uint64_t> unset;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].IsInitialized()) {
      *out->add_tensors() = tensors[i].AsProto();
    } else {
      unset.push_back(i);
    }
  }
  std::string metadata;
  {
    google::protobuf::io::StringOutputStream stream(&metadata);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.WriteVarint64(unset.size());
    for (uint64_t i : unset) coded.WriteVarint64(i);
    coded.WriteVarint64(static_cast<uint64_t>(element_dtype));
    coded.WriteVarint64(static_cast<uint64_t>(max_num_elements));
  }
  element_shape.AsProto().AppendToString(&metadata);
  out->set_metadata(std::move(metadata));
}

absl::StatusOr<TensorList> TensorList::Decode(const VariantTensorDataProto& data) {
  auto corrupt = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("A TensorList variant's encoding is corrupt: ", what));
  };
  if (data.type_name() != kTypeName) {
    return absl::InvalidArgumentError(
        absl::StrCat("A variant of type '", data.type_name(), "' is not a ", kTypeName));
  }
  const std::string& metadata = data.metadata();
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(metadata.data()),
                                            static_cast<int>(metadata.size()));
  uint64_t num_unset = 0;
  if (!in.ReadVarint64(&num_unset)) return corrupt("no count of unset elements");
  const uint64_t total = num_unset + static_cast<uint64_t>(data.tensors_size());
  // Each unset index takes a byte at least: a count past the metadata's size
  // is corrupt (and must not size an allocation).
  if (num_unset > metadata.size() || num_unset > static_cast<uint64_t>(kMaxTensorListElements) ||
      total > static_cast<uint64_t>(kMaxTensorListElements)) {
    return corrupt(absl::StrCat(total, " elements, more than a list may hold"));
  }
  std::vector<uint64_t> unset(num_unset);
  for (uint64_t& i : unset) {
    if (!in.ReadVarint64(&i)) return corrupt("an unset element's index is missing");
  }
  uint64_t dtype = 0;
  uint64_t max_num_elements = 0;
  if (!in.ReadVarint64(&dtype) || !in.ReadVarint64(&max_num_elements)) {
    return corrupt("no element dtype or max_num_elements");
  }
  if (!IsValidDataType(static_cast<int>(dtype)) || IsRefType(static_cast<DataType>(dtype))) {
    return corrupt(absl::StrCat("element dtype ", dtype, " is not a dtype"));
  }
  TensorShapeProto shape_proto;
  const int consumed = in.CurrentPosition();
  if (!shape_proto.ParseFromArray(metadata.data() + consumed,
                                  static_cast<int>(metadata.size()) - consumed)) {
    return corrupt("the element shape does not parse");
  }
  TensorList list;
  list.element_dtype = static_cast<DataType>(dtype);
  list.max_num_elements = static_cast<int64_t>(max_num_elements);
  TW_ASSIGN_OR_RETURN(list.element_shape, PartialTensorShape::FromProto(shape_proto));
  list.tensors.reserve(total);
  size_t next_unset = 0;
  int next_tensor = 0;
  for (uint64_t i = 0; i < total; ++i) {
    if (next_unset < unset.size() && unset[next_unset] == i) {
      list.tensors.emplace_back();
      ++next_unset;
    } else if (next_tensor < data.tensors_size()) {
      TW_ASSIGN_OR_RETURN(Tensor t, Tensor::FromProto(data.tensors(next_tensor++)));
      list.tensors.push_back(std::move(t));
    } else {
      return corrupt("the unset elements' indices are out of order or out of range");
    }
  }
  if (next_unset != unset.size()) return corrupt("an unset element's index is out of range");
  return list;
}

absl::StatusOr<Variant> DecodeVariant(const VariantTensorDataProto& data) {
  if (data.type_name() != TensorList::kTypeName) {
    return absl::InvalidArgumentError(absl::StrCat("A variant of type '", data.type_name(),
                                                   "' cannot be decoded: Towerflow knows ",
                                                   TensorList::kTypeName, " only"));
  }
  TW_ASSIGN_OR_RETURN(TensorList list, TensorList::Decode(data));
  return Variant(std::move(list));
}

}  // namespace towerflow
