#include "core/proto_io.h"

#include <climits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"

namespace towerflow {
namespace {

class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    errors_.push_back(absl::StrCat("line ", line + 1, ":", column + 1, ": ", message));
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::vector<std::string> errors_;
};

}  // namespace

absl::Status ParseTextProto(absl::string_view text, google::protobuf::Message* message) {
  if (text.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError("Text proto larger than 2 GiB");
  }
  CollectErrors errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  if (!parser.Parse(&input, message)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Cannot parse text ", message->GetTypeName(), ": ",
                     errors.errors().empty() ? std::string("unknown error")
                                             : absl::StrJoin(errors.errors(), "; ")));
  }
  return absl::OkStatus();
}

absl::Status ParseBinaryProto(absl::string_view bytes, google::protobuf::Message* message) {
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError(
        absl::StrCat("Cannot parse ", bytes.size(), " bytes as a binary ", message->GetTypeName(),
                     ": the data is corrupt, truncated, or another message"));
  }
  return absl::OkStatus();
}

std::string SerializeDeterministic(const google::protobuf::Message& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

std::string PrintTextProto(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(message, &text);
  return text;
}

}  // namespace towerflow
