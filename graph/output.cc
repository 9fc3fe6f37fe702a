#include "graph/output.h"

#include <memory>

#include "core/status_macros.h"

namespace towerflow {

std::string Output::name() const {
  if (!op_.valid()) return "<invalid output>";
  return absl::StrCat(op_.name(), ":", index_);
}

Input::Initializer::Initializer(const char* value)
    : tensor_(MakeScalarTensorProto<std::string>(value)) {}

Input::Initializer::Initializer(const std::string& value)
    : tensor_(MakeScalarTensorProto<std::string>(value)) {}

Input::Initializer::Initializer(const TensorProto& tensor)
    : status_(ValidateTensorProto(tensor)), tensor_(tensor) {}

namespace {

// Rank of a numeric dtype in literal promotion; -1 if it does not promote.
int PromotionRank(DataType dt) {
  switch (dt) {
    case DT_INT32:
      return 0;
    case DT_INT64:
      return 1;
    case DT_FLOAT:
      return 2;
    case DT_DOUBLE:
      return 3;
    default:
      return -1;
  }
}

// The dtype a list of literals of these dtypes becomes.
absl::StatusOr<DataType> PromotedType(const std::vector<DataType>& types) {
  DataType best = types[0];
  for (DataType dt : types) {
    if (dt == best) continue;
    const int a = PromotionRank(best), b = PromotionRank(dt);
    if (a < 0 || b < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Initializer list mixes ",
                                                     DataTypeString(best), " and ",
                                                     DataTypeString(dt), " elements"));
    }
    if (b > a) best = dt;
  }
  return best;
}

template <typename T, typename Source>
TensorProto Concatenated(const std::vector<Source>& values, const TensorShape& shape) {
  std::unique_ptr<T[]> cast(new T[values.size()]);
  for (size_t i = 0; i < values.size(); ++i) cast[i] = static_cast<T>(values[i]);
  return MakeTensorProto<T>(absl::MakeConstSpan(cast.get(), values.size()), shape);
}

absl::StatusOr<TensorProto> Stack(const std::vector<TensorProto>& elements) {
  std::vector<DataType> types;
  for (const TensorProto& e : elements) types.push_back(e.dtype());
  TW_ASSIGN_OR_RETURN(const DataType dtype, PromotedType(types));
  TW_ASSIGN_OR_RETURN(TensorShape element_shape, TensorProtoShape(elements[0]));
  TensorShape shape({static_cast<int64_t>(elements.size())});
  for (int64_t d : element_shape.dim_sizes()) TW_RETURN_IF_ERROR(shape.AddDim(d));
  std::vector<int64_t> ints;
  std::vector<double> reals;
  std::vector<std::string> strings;
  for (const TensorProto& e : elements) {
    TW_ASSIGN_OR_RETURN(TensorShape s, TensorProtoShape(e));
    if (s != element_shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Initializer list elements have different shapes: ", element_shape.DebugString(), " and ",
          s.DebugString()));
    }
    TW_ASSIGN_OR_RETURN(TensorProto converted, ConvertTensorProto(e, dtype));
    if (dtype == DT_STRING) {
      TW_ASSIGN_OR_RETURN(std::vector<std::string> v, TensorProtoAsStrings(converted));
      strings.insert(strings.end(), v.begin(), v.end());
    } else if (DataTypeIsFloating(dtype)) {
      TW_ASSIGN_OR_RETURN(std::vector<double> v, TensorProtoAsDoubles(converted));
      reals.insert(reals.end(), v.begin(), v.end());
    } else {
      TW_ASSIGN_OR_RETURN(std::vector<int64_t> v, TensorProtoAsInt64s(converted));
      ints.insert(ints.end(), v.begin(), v.end());
    }
  }
  switch (dtype) {
    case DT_FLOAT:
      return Concatenated<float>(reals, shape);
    case DT_DOUBLE:
      return Concatenated<double>(reals, shape);
    case DT_INT32:
      return Concatenated<int32_t>(ints, shape);
    case DT_INT64:
      return Concatenated<int64_t>(ints, shape);
    case DT_UINT8:
      return Concatenated<uint8_t>(ints, shape);
    case DT_UINT32:
      return Concatenated<uint32_t>(ints, shape);
    case DT_UINT64:
      return Concatenated<uint64_t>(ints, shape);
    case DT_BOOL:
      return Concatenated<bool>(ints, shape);
    case DT_STRING:
      return MakeTensorProto<std::string>(absl::MakeConstSpan(strings), shape);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("Initializer lists of ", DataTypeString(dtype), " are not supported"));
  }
}

}  // namespace

Input::Initializer::Initializer(std::initializer_list<Initializer> elements) {
  if (elements.size() == 0) {
    tensor_ = MakeTensorProto<float>({}, TensorShape({0}));
    return;
  }
  std::vector<TensorProto> protos;
  for (const Initializer& e : elements) {
    if (!e.status().ok()) {
      status_ = e.status();
      return;
    }
    protos.push_back(e.tensor());
  }
  absl::StatusOr<TensorProto> stacked = Stack(protos);
  if (!stacked.ok()) {
    status_ = stacked.status();
    return;
  }
  tensor_ = *std::move(stacked);
}

}  // namespace towerflow
