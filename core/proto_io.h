// Protocol buffer text and binary (de)serialization with Status errors.
//
//   GraphDef g;
//   TW_RETURN_IF_ERROR(ParseTextProto(text, &g));   // "line 3:7: Expected ..."
//   std::string bytes = SerializeDeterministic(g);   // same message, same bytes
//
// Text parsing is strict like TensorFlow's ReadTextProto (unknown fields are
// errors) and accepts everything TensorFlow writes: comments, CRLF line ends,
// `attr: {` and `attr {`, one-line messages, `<...>`, repeated scalars as
// `i: [1, 2]`. Thread-safe.
#ifndef TOWERFLOW_CORE_PROTO_IO_H_
#define TOWERFLOW_CORE_PROTO_IO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace towerflow {

// InvalidArgument with every error's line:column and the message type.
absl::Status ParseTextProto(absl::string_view text, google::protobuf::Message* message);

// DataLoss when the bytes are not a valid encoding of the message type
// (corrupt, truncated, or another message altogether).
absl::Status ParseBinaryProto(absl::string_view bytes, google::protobuf::Message* message);

// Binary form with map entries sorted, so equal messages give equal bytes.
std::string SerializeDeterministic(const google::protobuf::Message& message);

// Text form as TensorFlow writes it (C++ TextFormat: fields in number order,
// map entries sorted by key).
std::string PrintTextProto(const google::protobuf::Message& message);

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_PROTO_IO_H_
