#include "tools/run.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>
#include <type_traits>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/file_io.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/memory_limits.h"
#include "framework/node_def_util.h"
#include "graph/graph.h"
#include "graph/graph_io.h"
#include "nlohmann/json.hpp"
#include "runtime/session.h"
#include "train/queue_runner.h"

namespace towerflow {
namespace tools {
namespace {

using Json = nlohmann::json;

// Note [Non-finite numbers in JSON]
// JSON has no NaN or infinities, so nlohmann writes them as null and a user
// cannot tell them apart. The tool writes them as Python's json module does
// (NaN, Infinity, -Infinity: what json.loads reads back) and reads the same
// tokens, or those words as strings, in feeds.

// `j` as compact JSON, with non-finite numbers as Python's tokens.
void DumpJson(const Json& j, std::string* out) {
  if (j.is_number_float() && !std::isfinite(j.get<double>())) {
    const double v = j.get<double>();
    out->append(std::isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
  } else if (j.is_array()) {
    out->push_back('[');
    for (size_t i = 0; i < j.size(); ++i) {
      if (i > 0) out->push_back(',');
      DumpJson(j[i], out);
    }
    out->push_back(']');
  } else if (j.is_object()) {
    out->push_back('{');
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      if (!first) out->push_back(',');
      first = false;
      out->append(Json(key).dump());
      out->push_back(':');
      DumpJson(value, out);
    }
    out->push_back('}');
  } else {
    out->append(j.dump());
  }
}
std::string DumpJson(const Json& j) {
  std::string out;
  DumpJson(j, &out);
  return out;
}

// `text` with the bare tokens NaN, Infinity and -Infinity outside strings
// quoted, so that strict JSON parses it; Store reads them back as numbers.
std::string QuoteNonFiniteTokens(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      out.push_back(ch);
      if (ch == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') in_string = true;
    bool replaced = false;
    for (const char* token : {"-Infinity", "Infinity", "NaN"}) {
      const size_t n = std::strlen(token);
      if (text.compare(i, n, token) == 0) {
        absl::StrAppend(&out, "\"", token, "\"");
        i += n - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(ch);
  }
  return out;
}

template <typename T>
absl::Status Store(const Json& leaf, T* out, int64_t i) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (!leaf.is_string())
      return absl::InvalidArgumentError(absl::StrCat("value ", i, " is not a string"));
    *out = leaf.get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!leaf.is_boolean() && !leaf.is_number_integer()) {
      return absl::InvalidArgumentError(absl::StrCat("value ", i, " is not a bool"));
    }
    *out = leaf.is_boolean() ? leaf.get<bool>() : leaf.get<int64_t>() != 0;
  } else {
    // NaN, Infinity and -Infinity (Note [Non-finite numbers in JSON]).
    double non_finite = 0;
    const bool special =
        leaf.is_string() && (leaf == "NaN" || leaf == "Infinity" || leaf == "-Infinity");
    if (special) {
      non_finite = leaf == "NaN"        ? std::numeric_limits<double>::quiet_NaN()
                   : leaf == "Infinity" ? std::numeric_limits<double>::infinity()
                                        : -std::numeric_limits<double>::infinity();
    }
    if (!leaf.is_number() && !leaf.is_boolean() && !special) {
      return absl::InvalidArgumentError(
          absl::StrCat("value ", i, " (", leaf.dump(), ") is not a number"));
    }
    if (special && std::is_integral_v<T>) {
      return absl::InvalidArgumentError(absl::StrCat("value ", i, " (", leaf.get<std::string>(),
                                                     ") does not fit ",
                                                     DataTypeString(DataTypeToEnum<T>::value)));
    }
    const double v = special             ? non_finite
                     : leaf.is_boolean() ? leaf.get<bool>()
                                         : leaf.get<double>();
    if constexpr (std::is_integral_v<T>) {
      // Exactly: JSON integers as integers (9223372036854775808 is not an
      // int64), other numbers whole and in [min, 2^digits).
      using Limits = std::numeric_limits<T>;
      bool fits = false;
      if (leaf.is_number_unsigned()) {
        const uint64_t u = leaf.get<uint64_t>();
        fits = u <= static_cast<uint64_t>(Limits::max());
        *out = static_cast<T>(u);
      } else if (leaf.is_number_integer()) {
        const int64_t n = leaf.get<int64_t>();
        fits = n >= static_cast<int64_t>(Limits::min()) &&
               (n < 0 || static_cast<uint64_t>(n) <= static_cast<uint64_t>(Limits::max()));
        *out = static_cast<T>(n);
      } else {
        fits = v == std::floor(v) && v >= static_cast<double>(Limits::min()) &&
               v < std::ldexp(1.0, Limits::digits);
        if (fits) *out = static_cast<T>(v);
      }
      if (!fits) {
        return absl::InvalidArgumentError(absl::StrCat("value ", i, " (", leaf.dump(),
                                                       ") does not fit ",
                                                       DataTypeString(DataTypeToEnum<T>::value)));
      }
    } else {
      *out = static_cast<T>(v);
    }
  }
  return absl::OkStatus();
}

// Note [Feeds parsed as a stream]
// A feed's JSON is read event by event (nlohmann's SAX interface) into one
// buffer of its values: no JSON value is kept per element, which would take
// 16-40 bytes each (a 1 GB feed file, 10+ GB). The shape is found as the
// lists close; the values count against the session's limits as they come:
// the buffer and the tensor made from it within max_tensor_bytes, and they
// with the text itself within what the host budget leaves.
template <typename T>
class FeedReader final : public nlohmann::json_sax<Json> {
 public:
  // What a value is kept as (std::vector<bool> has no element storage).
  using Slot = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

  FeedReader(DataType dtype, int64_t text_bytes, const MemoryLimits& limits)
      : dtype_(dtype), limits_(limits), text_bytes_(text_bytes) {}

  absl::StatusOr<Tensor> Finish() {
    TW_RETURN_IF_ERROR(status_);
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(shape_));
    if (shape.num_elements() != static_cast<int64_t>(values_.size())) {
      return absl::InvalidArgumentError("ragged list at values");
    }
    TW_RETURN_IF_ERROR(
        CheckRoom(static_cast<int64_t>(values_.size()), static_cast<int64_t>(values_.capacity())));
    TW_ASSIGN_OR_RETURN(Tensor t, AllocateHostTensor(dtype_, shape, limits_));
    T* data = t.data<T>();
    for (size_t i = 0; i < values_.size(); ++i) data[i] = std::move(values_[i]);
    return t;
  }

  bool null() override { return Leaf(Json(nullptr)); }
  bool boolean(bool v) override { return Leaf(Json(v)); }
  bool number_integer(number_integer_t v) override { return Leaf(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Leaf(Json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Leaf(Json(v)); }
  bool string(string_t& v) override { return Leaf(Json(std::move(v))); }
  bool binary(binary_t&) override { return NotAValue("binary data"); }
  bool start_object(std::size_t) override { return NotAValue("an object"); }
  bool key(string_t&) override { return NotAValue("an object"); }
  bool end_object() override { return NotAValue("an object"); }

  bool start_array(std::size_t) override {
    const size_t depth = open_.size();
    // A tensor has at most kMaxTensorRank dimensions.
    if (depth >= static_cast<size_t>(kMaxTensorRank)) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "lists nested deeper than the ", kMaxTensorRank, " dimensions a tensor can have")));
    }
    if (!open_.empty()) ++open_.back();
    if (depth == shape_.size()) {
      // The first list this deep: its dimension is known when it closes.
      if (!values_.empty()) return Fail(Ragged());
      shape_.push_back(-1);
    }
    open_.push_back(0);
    return true;
  }

  bool end_array() override {
    const int64_t n = open_.back();
    open_.pop_back();
    int64_t& dim = shape_[open_.size()];
    if (dim < 0) {
      dim = n;
    } else if (dim != n) {
      return Fail(Ragged());
    }
    return true;
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    return Fail(
        absl::InvalidArgumentError(absl::StrCat("not JSON at byte ", position, ": ", e.what())));
  }

 private:
  // "ragged list at values[1][0]": the list or value being read.
  absl::Status Ragged() const {
    std::string where = "values";
    for (int64_t n : open_) absl::StrAppend(&where, "[", n - 1, "]");
    return absl::InvalidArgumentError(absl::StrCat("ragged list at ", where));
  }

  bool Fail(absl::Status status) {
    if (status_.ok()) status_ = std::move(status);
    return false;
  }

  bool NotAValue(absl::string_view what) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("value ", values_.size(), " is ", what, ", not a ", DataTypeString(dtype_))));
  }

  // `count` values against max_tensor_bytes; the text, the buffer (of
  // `slots` values) and the tensor they become against the host budget
  // (Note [Feeds parsed as a stream]).
  absl::Status CheckRoom(int64_t count, int64_t slots) const {
    const int64_t tensor_bytes = count * element_bytes_;
    if (tensor_bytes > limits_.max_tensor_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          count, " values or more (", tensor_bytes, " bytes as ", DataTypeString(dtype_),
          "), past the session's max_tensor_bytes of ", limits_.max_tensor_bytes));
    }
    const int64_t buffer_bytes = slots * static_cast<int64_t>(sizeof(Slot));
    return CheckHostBudget(
        text_bytes_ + buffer_bytes + tensor_bytes, limits_,
        absl::StrCat("reading ", count, " values from ", text_bytes_, " bytes of JSON"));
  }

  bool Leaf(const Json& leaf) {
    if (!open_.empty()) ++open_.back();
    if (open_.size() != shape_.size()) return Fail(Ragged());
    const int64_t count = static_cast<int64_t>(values_.size()) + 1;
    if (count * element_bytes_ > limits_.max_tensor_bytes) return Fail(CheckRoom(count, 0));
    if (values_.size() == values_.capacity()) {
      // Grown by doubling, never past what max_tensor_bytes allows.
      const int64_t most = std::max(count, limits_.max_tensor_bytes / element_bytes_);
      const int64_t grown =
          std::min(most, std::max<int64_t>(64, 2 * static_cast<int64_t>(values_.capacity())));
      absl::Status room = CheckRoom(count, grown);
      if (!room.ok()) return Fail(std::move(room));
      values_.reserve(static_cast<size_t>(grown));
    }
    T value{};
    absl::Status stored = Store<T>(leaf, &value, count - 1);
    if (!stored.ok()) return Fail(std::move(stored));
    values_.push_back(std::move(value));
    return true;
  }

  const DataType dtype_;
  const MemoryLimits& limits_;
  const int64_t text_bytes_;
  const int64_t element_bytes_ = static_cast<int64_t>(TensorElementSize(dtype_));
  absl::Status status_;
  std::vector<int64_t> shape_;  // -1 until the first list that deep closes
  std::vector<int64_t> open_;   // values (or lists) so far in each open list
  std::vector<Slot> values_;
};

// t's values as a flat JSON list, written element by element: no JSON value
// per element is kept, so printing a tensor takes memory for one element's
// text, not tens of bytes per element. Real numbers and bools are JSON
// numbers, strings JSON strings, complex numbers [real, imaginary] pairs;
// handles and the rest one string of their summary.
template <typename T>
void WriteValues(const Tensor& t, std::ostream& out) {
  out << '[';
  std::string text;
  bool first = true;
  for (const T& v : t.span<T>()) {
    if (!first) out << ',';
    first = false;
    text.clear();
    if constexpr (kIsFloat16<T>) {
      DumpJson(Json(static_cast<float>(v)), &text);
    } else if constexpr (kIsComplex<T>) {
      DumpJson(Json::array({v.real(), v.imag()}), &text);
    } else {
      DumpJson(Json(v), &text);
    }
    out << text;
  }
  out << ']';
}

void WriteValues(const Tensor& t, std::ostream& out) {
  if (t.dtype() == DT_STRING) return WriteValues<std::string>(t, out);
  bool written = false;
  VisitNumberType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_arithmetic_v<T> || kIsFloat16<T> || kIsComplex<T>) {
      WriteValues<T>(t, out);
      written = true;
    }
  });
  VisitQuantizedType(t.dtype(), [&](auto zero) {  // the integers, as numpy shows them
    using S = decltype(zero);
    const S* v = static_cast<const S*>(t.raw_data());
    out << '[';
    for (int64_t i = 0; i < t.NumElements(); ++i)
      out << (i ? "," : "") << static_cast<int64_t>(v[i]);
    out << ']';
    written = true;
  });
  if (!written) out << DumpJson(Json(t.SummarizeValue(1 << 20)));
}

// {"dtype": ..., "shape": [...], "values": [...]}, streamed.
void WriteJson(const Tensor& t, std::ostream& out) {
  out << "{\"dtype\":" << Json(DataTypeString(t.dtype())).dump() << ",\"shape\":"
      << Json(std::vector<int64_t>(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end()))
             .dump()
      << ",\"values\":";
  WriteValues(t, out);
  out << '}';
}

absl::StatusOr<std::pair<std::string, Tensor>> ParseFeed(const std::string& feed,
                                                         const Graph& graph,
                                                         const MemoryLimits& limits) {
  const size_t eq = feed.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("--feed '", feed, "' is not NAME=JSON"));
  }
  const std::string name = feed.substr(0, eq);
  std::string json = feed.substr(eq + 1);
  DataType dtype = DT_INVALID;
  const size_t colon = json.rfind(':');
  if (colon != std::string::npos && DataTypeFromString(json.substr(colon + 1), &dtype)) {
    json = json.substr(0, colon);
  } else {
    TW_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(name));
    const Node* node = graph.FindNode(id.node);
    if (node == nullptr || id.index < 0 || id.index >= node->num_outputs()) {
      return absl::NotFoundError(absl::StrCat("--feed ", name, ": no such tensor in the graph"));
    }
    dtype = BaseType(node->output_type(id.index));
  }
  absl::StatusOr<Tensor> t = TensorFromJsonOrFile(json, dtype, limits);
  if (!t.ok()) return AddErrorContext(t.status(), absl::StrCat("--feed ", name));
  return std::make_pair(name, *std::move(t));
}

}  // namespace

absl::StatusOr<Tensor> TensorFromJson(const std::string& text, DataType dtype,
                                      const MemoryLimits& limits) {
  // Note [Non-finite numbers in JSON]: the quoted copy is read.
  const std::string quoted = QuoteNonFiniteTokens(text);
  const int64_t text_bytes = static_cast<int64_t>(text.size() + quoted.size());
  absl::StatusOr<Tensor> t;
  bool read = false;
  VisitNumberType(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_arithmetic_v<T> || kIsFloat16<T>) {
      FeedReader<T> reader(dtype, text_bytes, limits);
      Json::sax_parse(quoted, &reader);
      t = reader.Finish();
      read = true;
    }
  });
  VisitQuantizedType(dtype, [&](auto zero) {  // read as the integers that store them
    using S = decltype(zero);
    t = TensorFromJson(text, DataTypeToEnum<S>::value, limits);
    if (t.ok()) t = t->BitcastTo(dtype, t->shape());
    read = true;
  });
  if (!read && dtype == DT_STRING) {
    FeedReader<std::string> reader(dtype, text_bytes, limits);
    Json::sax_parse(quoted, &reader);
    t = reader.Finish();
    read = true;
  }
  if (!read) {
    return absl::InvalidArgumentError(absl::StrCat("cannot feed JSON as ", DataTypeString(dtype)));
  }
  return t;
}

absl::StatusOr<Tensor> TensorFromNpy(absl::string_view bytes, DataType dtype,
                                     const MemoryLimits& limits) {
  constexpr absl::string_view kMagic("\x93NUMPY", 6);
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic) {
    return absl::InvalidArgumentError("not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len =
        static_cast<uint8_t>(bytes[8]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    header_start = 10;
  } else if ((major == 2 || major == 3) && bytes.size() >= 12) {
    for (int i = 0; i < 4; ++i)
      header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(".npy format version ", major, " is not supported"));
  }
  if (header_len > bytes.size() - header_start) {
    return absl::InvalidArgumentError(".npy header is longer than the file");
  }
  const absl::string_view header = bytes.substr(header_start, header_len);
  const absl::string_view data = bytes.substr(header_start + header_len);
  // The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3),
  // }
  const auto value_of = [&](absl::string_view key) -> absl::string_view {
    const size_t at = header.find(absl::StrCat("'", key, "':"));
    if (at == absl::string_view::npos) return {};
    absl::string_view rest = header.substr(at + key.size() + 3);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    return rest;
  };
  absl::string_view descr = value_of("descr");
  absl::string_view order = value_of("fortran_order");
  absl::string_view shape_text = value_of("shape");
  if (descr.size() < 5 || descr.front() != '\'' || shape_text.empty() ||
      shape_text.front() != '(' || order.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("malformed .npy header: ", header));
  }
  descr = descr.substr(1, descr.find('\'', 1) - 1);
  if (absl::StartsWith(order, "True")) {
    return absl::UnimplementedError(".npy arrays in Fortran order are not supported");
  }
  static const auto* kDescrs = new std::map<std::string, DataType>{
      {"<f2", DT_HALF},   {"<f4", DT_FLOAT}, {"<f8", DT_DOUBLE}, {"<i4", DT_INT32},
      {"<i8", DT_INT64},  {"|u1", DT_UINT8}, {"|i1", DT_INT8},   {"<i2", DT_INT16},
      {"<u2", DT_UINT16}, {"|b1", DT_BOOL}};
  auto it = kDescrs->find(std::string(descr));
  if (it == kDescrs->end()) {
    return absl::UnimplementedError(absl::StrCat(".npy dtype '", descr, "' is not supported"));
  }
  if (it->second != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(".npy holds ", DataTypeString(it->second), " ('",
                                                   descr, "'), the input is ",
                                                   DataTypeString(dtype)));
  }
  std::vector<int64_t> dims;
  const absl::string_view inside = shape_text.substr(1, shape_text.find(')') - 1);
  for (absl::string_view d : absl::StrSplit(inside, ',', absl::SkipWhitespace())) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(d, &v)) {
      return absl::InvalidArgumentError(absl::StrCat("malformed .npy shape: (", inside, ")"));
    }
    dims.push_back(v);
  }
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  const uint64_t need = static_cast<uint64_t>(shape.num_elements()) * DataTypeSize(dtype);
  if (data.size() != need) {
    return absl::InvalidArgumentError(absl::StrCat(".npy shape ", shape.DebugString(), " needs ",
                                                   need, " bytes of data, the file has ",
                                                   data.size()));
  }
  TW_ASSIGN_OR_RETURN(Tensor t, AllocateHostTensor(dtype, shape, limits));
  if (need > 0) std::memcpy(t.raw_data(), data.data(), need);
  NormalizeBoolBytes(&t);
  return t;
}

absl::StatusOr<Tensor> TensorFromJsonOrFile(const std::string& value, DataType dtype,
                                            const MemoryLimits& limits) {
  if (value.empty() || value[0] != '@') return TensorFromJson(value, dtype, limits);
  const std::string path = value.substr(1);
  // The file's bytes stay while the tensor is made: they count, and a file
  // that leaves no room for them is refused before it is read.
  TW_ASSIGN_OR_RETURN(std::string bytes,
                      ReadFileToString(path, std::max<int64_t>(HostBudgetLeft(limits), 0)));
  absl::StatusOr<Tensor> t = absl::EndsWith(path, ".npy") ? TensorFromNpy(bytes, dtype, limits)
                                                          : TensorFromJson(bytes, dtype, limits);
  if (!t.ok()) return AddErrorContext(t.status(), path);
  return t;
}

std::string TensorToJson(const Tensor& t) {
  std::ostringstream out;
  WriteJson(t, out);
  return out.str();
}

absl::StatusOr<std::map<std::string, int>> ParseDeviceCount(const std::vector<std::string>& specs) {
  std::map<std::string, int> counts;
  for (const std::string& spec : specs) {
    std::vector<std::string> parts = absl::StrSplit(spec, '=');
    int n = 0;
    if (parts.size() != 2 || parts[0].empty() || !absl::SimpleAtoi(parts[1], &n) || n < 0) {
      return absl::InvalidArgumentError(absl::StrCat("--device_count '", spec, "' is not TYPE=N"));
    }
    counts[parts[0]] = n;
  }
  return counts;
}

bool IsMetaGraphPath(absl::string_view path) {
  const absl::string_view name = path.substr(path.find_last_of('/') + 1);
  return absl::EndsWith(name, ".meta") || absl::StrContains(name, ".meta.");
}

namespace {

// Stops the queue runners and waits for them: the first one's error, or OK.
// The session is closed first when there are runners, ending a run that
// waits on a queue that no cancel op closes (a reader's empty file queue):
// the fetches are done by then.
absl::Status StopQueueRunners(Session* session,
                              const std::vector<std::unique_ptr<train::QueueRunner>>& runners) {
  if (runners.empty()) return absl::OkStatus();
  for (const auto& runner : runners) runner->RequestStop();
  session->Close().IgnoreError();
  absl::Status status;
  for (const auto& runner : runners) status.Update(runner->Join());
  return status;
}

}  // namespace

absl::StatusOr<std::string> RunGraph(const RunCommand& c) {
  if (c.fetches.empty() && c.targets.empty()) {
    return absl::InvalidArgumentError("run needs at least one --fetch or --target");
  }
  // A GraphDef file is read as a meta graph with no collections.
  MetaGraphDef meta;
  if (IsMetaGraphPath(c.graph_path)) {
    TW_ASSIGN_OR_RETURN(meta, ReadMetaGraphDef(c.graph_path));
  } else if (c.queue_runners) {
    return absl::InvalidArgumentError(
        absl::StrCat("--queue_runners needs a MetaGraphDef (a .meta file) for its queue runners; ",
                     c.graph_path, " is read as a GraphDef"));
  } else {
    TW_ASSIGN_OR_RETURN(*meta.mutable_graph_def(), ReadGraphDef(c.graph_path));
  }
  const GraphDef& def = meta.graph_def();
  Graph graph;
  TW_RETURN_IF_ERROR(ImportGraphDef(def, &graph));
  // The feeds are read within the limits the session will have.
  const MemoryLimits limits = MemoryLimits::Default();
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string& f : c.feeds) {
    TW_ASSIGN_OR_RETURN(auto feed, ParseFeed(f, graph, limits));
    feeds.push_back(std::move(feed));
  }
  SessionOptions options;
  options.device_count = c.device_count;
  options.allow_soft_placement = true;
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  TW_RETURN_IF_ERROR(session->Create(def));
  for (const std::string& target : c.targets) {
    TW_RETURN_IF_ERROR(session->Run(feeds, {}, {target}, nullptr));
  }
  // After the targets (the initialisers), as a TF 1 program starts them.
  // Declared after the session: they stop before it goes.
  std::vector<std::unique_ptr<train::QueueRunner>> runners;
  if (c.queue_runners) {
    TW_ASSIGN_OR_RETURN(runners, train::QueueRunnersFromMetaGraph(session.get(), meta));
    if (runners.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          c.graph_path,
          " has no queue runners (its collection 'queue_runners' is empty or absent)"));
    }
    for (const auto& runner : runners) runner->Start();
  }
  if (c.fetches.empty()) {
    TW_RETURN_IF_ERROR(StopQueueRunners(session.get(), runners));
    const std::string none = c.json ? "{}\n" : "";
    if (c.out == nullptr) return none;
    *c.out << none;
    return std::string();
  }
  RunOptions run_options;
  if (!c.trace_path.empty()) run_options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata metadata;
  std::vector<Tensor> outputs;
  const absl::Status fetched = session->Run(run_options, feeds, c.fetches, {}, &outputs, &metadata);
  // A runner's failure first: it is why a dequeue found its queue closed.
  TW_RETURN_IF_ERROR(StopQueueRunners(session.get(), runners));
  TW_RETURN_IF_ERROR(fetched);
  if (!c.trace_path.empty())
    TW_RETURN_IF_ERROR(WriteChromeTrace(metadata.step_stats, c.trace_path));
  // Printing a tensor takes tens of bytes of text per element: past the
  // limit the tool refuses, naming the fetch and the flag that raises it.
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].NumElements() > c.max_output_elements) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "fetch '", c.fetches[i], "' has ", outputs[i].NumElements(), " elements (shape ",
          outputs[i].shape().DebugString(), "), past --max_output_elements=", c.max_output_elements,
          "; raise the flag to print it"));
    }
  }
  std::ostringstream text;
  std::ostream& out = c.out != nullptr ? *c.out : text;
  if (c.json) {
    // One object keyed by fetch, in key order (a JSON object's, as
    // nlohmann's objects keep them), a repeated fetch printed once.
    std::map<std::string, const Tensor*> by_name;
    for (size_t i = 0; i < outputs.size(); ++i) by_name[c.fetches[i]] = &outputs[i];
    out << '{';
    bool first = true;
    for (const auto& [name, tensor] : by_name) {
      if (!first) out << ',';
      first = false;
      out << Json(name).dump() << ':';
      WriteJson(*tensor, out);
    }
    out << "}\n";
  } else {
    for (size_t i = 0; i < outputs.size(); ++i) {
      out << c.fetches[i] << ": " << DataTypeString(outputs[i].dtype()) << " "
          << outputs[i].shape().DebugString() << " ";
      WriteValues(outputs[i], out);
      out << "\n";
    }
  }
  out.flush();
  if (!out) return absl::DataLossError("run: could not write the fetched values");
  return text.str();
}

}  // namespace tools
}  // namespace towerflow
