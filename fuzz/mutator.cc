#include "fuzz/mutator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "core/record_io.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/text_format.h"

namespace towerflow {
namespace fuzz {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// ------------------------------------------------------------------- bytes

std::string ByteMutator::Mutate(const std::string& in, const std::vector<std::string>& corpus,
                                size_t max_len) {
  std::string s = in;
  const int steps = 1 + static_cast<int>(Below(4));
  for (int i = 0; i < steps; ++i) Step(&s, corpus);
  if (s.size() > max_len) s.resize(max_len);
  return s;
}

std::string ByteMutator::MutateBytes(const std::string& piece) {
  return Mutate(piece, {}, piece.size() + 4096);
}

void ByteMutator::Step(std::string* s, const std::vector<std::string>& corpus) {
  static const char kBytes[] = {0, '\xff', 0x7f, '\x80', '0', '9', '-', ':', '{', '}', '"', ' '};
  static const char* const kNumbers[] = {"0",
                                         "-1",
                                         "1",
                                         "2",
                                         "255",
                                         "65536",
                                         "2147483647",
                                         "2147483648",
                                         "-2147483648",
                                         "4294967295",
                                         "4294967296",
                                         "4611686018427387904",
                                         "9223372036854775807",
                                         "-9223372036854775808",
                                         "18446744073709551615",
                                         "1000000000",
                                         "1e300",
                                         "nan"};
  static const uint64_t kVarints[] = {
      0, 1, 0x7f, 0x80, 0xffffffffull, 0x100000000ull, uint64_t{1} << 62, ~uint64_t{0}};
  switch (s->empty() ? 4 : Below(corpus.empty() ? 8 : 9)) {
    case 0:
      (*s)[Below(s->size())] ^= static_cast<char>(1 << Below(8));
      break;
    case 1:
      (*s)[Below(s->size())] = static_cast<char>(Below(256));
      break;
    case 2:
      (*s)[Below(s->size())] = kBytes[Below(sizeof(kBytes))];
      break;
    case 3: {
      const size_t at = Below(s->size());
      s->erase(at, 1 + Below(std::min<size_t>(16, s->size() - at)));
      break;
    }
    case 4: {
      std::string bytes(1 + Below(8), '\0');
      for (char& c : bytes) c = static_cast<char>(Below(256));
      s->insert(Below(s->size() + 1), bytes);
      break;
    }
    case 5: {
      const size_t from = Below(s->size());
      const std::string piece = s->substr(from, 1 + Below(64));
      s->insert(Below(s->size() + 1), piece);
      break;
    }
    case 6: {
      // A decimal number of a text input, replaced.
      std::vector<std::pair<size_t, size_t>> numbers;
      for (size_t i = 0; i < s->size();) {
        if (absl::ascii_isdigit(static_cast<unsigned char>((*s)[i]))) {
          size_t j = i;
          while (j < s->size() && absl::ascii_isdigit(static_cast<unsigned char>((*s)[j]))) ++j;
          numbers.emplace_back(i, j - i);
          i = j;
        } else {
          ++i;
        }
      }
      if (numbers.empty()) break;
      const auto [at, len] = numbers[Below(numbers.size())];
      s->replace(at, len, kNumbers[Below(sizeof(kNumbers) / sizeof(kNumbers[0]))]);
      break;
    }
    case 7: {
      // A varint of a binary input (protobuf's integers), overwritten.
      uint64_t v = kVarints[Below(sizeof(kVarints) / sizeof(kVarints[0]))];
      std::string bytes;
      do {
        bytes.push_back(static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
        v >>= 7;
      } while (v != 0);
      const size_t at = Below(s->size());
      s->replace(at, std::min(bytes.size(), s->size() - at), bytes);
      break;
    }
    case 8: {
      // A piece of another input spliced in.
      const std::string& other = corpus[Below(corpus.size())];
      if (other.empty()) break;
      const size_t from = Below(other.size());
      const std::string piece = other.substr(from, 1 + Below(256));
      const size_t at = Below(s->size());
      s->replace(at, Below(std::min<size_t>(256, s->size() - at) + 1), piece);
      break;
    }
  }
}

// ---------------------------------------------------------------- messages

namespace {

// Walking a message tree stops here: inputs are at most a megabyte, but a
// mutation need not see every one of a million repeated values.
constexpr size_t kMaxSites = 4096;
constexpr int kMaxDepth = 16;

// A place a mutation can change: `field` of `message`; `index` is an
// element of a repeated field, or -1 for the field as a whole (set, clear,
// add, drop, swap).
struct Site {
  Message* message;
  const FieldDescriptor* field;
  int index;
};

// Every site of `message`'s tree, the strings in it (names to copy into
// other strings: a node's input naming another node) and its messages by
// type (to copy one over another of the same type).
struct Tree {
  std::vector<Site> sites;
  std::vector<std::string> strings;
  std::vector<const Message*> messages;
};

void Walk(Message* message, int depth, Tree* tree);

// The tree of `message`, its strings sorted: protobuf maps iterate in an
// order that differs from process to process, and the pool of names to
// copy should not.
Tree TreeOf(Message* message) {
  Tree tree;
  Walk(message, 0, &tree);
  std::sort(tree.strings.begin(), tree.strings.end());
  return tree;
}

void Walk(Message* message, int depth, Tree* tree) {
  if (depth > kMaxDepth || tree->sites.size() >= kMaxSites) return;
  tree->messages.push_back(message);
  const Descriptor* descriptor = message->GetDescriptor();
  const Reflection* reflection = message->GetReflection();
  for (int f = 0; f < descriptor->field_count(); ++f) {
    const FieldDescriptor* field = descriptor->field(f);
    tree->sites.push_back({message, field, -1});
    const bool is_message = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    const bool is_string = field->cpp_type() == FieldDescriptor::CPPTYPE_STRING;
    if (field->is_repeated()) {
      const int n = reflection->FieldSize(*message, field);
      for (int i = 0; i < n && tree->sites.size() < kMaxSites; ++i) {
        tree->sites.push_back({message, field, i});
        if (is_message) {
          Walk(reflection->MutableRepeatedMessage(message, field, i), depth + 1, tree);
        } else if (is_string && tree->strings.size() < kMaxSites) {
          tree->strings.push_back(reflection->GetRepeatedString(*message, field, i));
        }
      }
    } else if (reflection->HasField(*message, field)) {
      if (is_message) {
        Walk(reflection->MutableMessage(message, field), depth + 1, tree);
      } else if (is_string && tree->strings.size() < kMaxSites) {
        tree->strings.push_back(reflection->GetString(*message, field));
      }
    }
  }
}

template <typename T>
T Pick(MutationContext& ctx, std::initializer_list<T> values) {
  return *(values.begin() + ctx.Below(values.size()));
}

// A signed value that broke TensorFlow's size checks, near `old`, or random.
int64_t NewSigned(int64_t old, MutationContext& ctx) {
  switch (ctx.Below(3)) {
    case 0:
      return Pick<int64_t>(
          ctx, {0, 1, -1, 2, 255, 256, 65536, int64_t{1} << 31, (int64_t{1} << 31) - 1,
                -(int64_t{1} << 31), int64_t{1} << 32, int64_t{1} << 33, int64_t{1} << 62,
                int64_t{1000000000}, std::numeric_limits<int64_t>::max(),
                std::numeric_limits<int64_t>::min()});
    case 1:
      return static_cast<int64_t>(static_cast<uint64_t>(old) +
                                  static_cast<uint64_t>(static_cast<int64_t>(ctx.Below(33)) - 16));
    default:
      return static_cast<int64_t>(ctx.Below(std::numeric_limits<uint64_t>::max()));
  }
}

double NewDouble(double old, MutationContext& ctx) {
  switch (ctx.Below(3)) {
    case 0:
      return Pick<double>(
          ctx, {0.0, -0.0, 1.0, -1.0, 0.5, 1e300, -1e300, std::numeric_limits<double>::infinity(),
                -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                std::numeric_limits<double>::denorm_min(), std::numeric_limits<float>::max(),
                2147483648.0, 9223372036854775808.0});
    case 1:
      return -old;
    default:
      return old * 2 + 1;
  }
}

std::string NewString(const std::string& old, const Tree& tree, MutationContext& ctx) {
  switch (ctx.Below(4)) {
    case 0:
      if (!tree.strings.empty()) return tree.strings[ctx.Below(tree.strings.size())];
      return old;
    case 1:
      // A name with an output index or a control mark, as node inputs have.
      return Pick<std::string>(ctx, {"", "^" + old, old + ":1", old + ":2147483648", old + ":-1"});
    default:
      return ctx.MutateBytes(old);
  }
}

// Sets the scalar `field` of `message` (element `index` when repeated,
// else the singular field) to a new value.
void SetScalar(Message* message, const FieldDescriptor* field, int index, const Tree& tree,
               MutationContext& ctx) {
  const Reflection* r = message->GetReflection();
  const bool rep = index >= 0;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      const int64_t old =
          rep ? r->GetRepeatedInt32(*message, field, index) : r->GetInt32(*message, field);
      const auto v = static_cast<int32_t>(static_cast<uint32_t>(NewSigned(old, ctx)));
      rep ? r->SetRepeatedInt32(message, field, index, v) : r->SetInt32(message, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      const int64_t old =
          rep ? r->GetRepeatedInt64(*message, field, index) : r->GetInt64(*message, field);
      const int64_t v = NewSigned(old, ctx);
      rep ? r->SetRepeatedInt64(message, field, index, v) : r->SetInt64(message, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      const int64_t old =
          rep ? r->GetRepeatedUInt32(*message, field, index) : r->GetUInt32(*message, field);
      const auto v = static_cast<uint32_t>(NewSigned(old, ctx));
      rep ? r->SetRepeatedUInt32(message, field, index, v) : r->SetUInt32(message, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      const auto old = static_cast<int64_t>(rep ? r->GetRepeatedUInt64(*message, field, index)
                                                : r->GetUInt64(*message, field));
      const auto v = static_cast<uint64_t>(NewSigned(old, ctx));
      rep ? r->SetRepeatedUInt64(message, field, index, v) : r->SetUInt64(message, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      const double old =
          rep ? r->GetRepeatedDouble(*message, field, index) : r->GetDouble(*message, field);
      const double v = NewDouble(old, ctx);
      rep ? r->SetRepeatedDouble(message, field, index, v) : r->SetDouble(message, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      const double old =
          rep ? r->GetRepeatedFloat(*message, field, index) : r->GetFloat(*message, field);
      const double d = NewDouble(old, ctx);
      // Out-of-range doubles become infinities, not undefined conversions.
      const float v = std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()
                          ? std::copysign(std::numeric_limits<float>::infinity(), d)
                          : static_cast<float>(d);
      rep ? r->SetRepeatedFloat(message, field, index, v) : r->SetFloat(message, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      const bool v =
          !(rep ? r->GetRepeatedBool(*message, field, index) : r->GetBool(*message, field));
      rep ? r->SetRepeatedBool(message, field, index, v) : r->SetBool(message, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      // Proto3 enums are open: values no enumerator names are kept (a
      // DataType of 209, a reference of a reference).
      const google::protobuf::EnumDescriptor* e = field->enum_type();
      int v = e->value(static_cast<int>(ctx.Below(e->value_count())))->number();
      if (field->file()->syntax() == FileDescriptor::SYNTAX_PROTO3 && ctx.Below(4) == 0) {
        v = Pick<int>(ctx, {-1, 100, 101, 200, 209, 2147483647});
      }
      rep ? r->SetRepeatedEnumValue(message, field, index, v) : r->SetEnumValue(message, field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string old =
          rep ? r->GetRepeatedString(*message, field, index) : r->GetString(*message, field);
      std::string v = NewString(old, tree, ctx);
      rep ? r->SetRepeatedString(message, field, index, std::move(v))
          : r->SetString(message, field, std::move(v));
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
}

// A message of `descriptor`'s type somewhere in the tree, other than
// `self`; nullptr when there is none.
const Message* SameType(const Tree& tree, const Descriptor* descriptor, const Message* self,
                        MutationContext& ctx) {
  std::vector<const Message*> same;
  for (const Message* m : tree.messages) {
    if (m != self && m->GetDescriptor() == descriptor) same.push_back(m);
  }
  return same.empty() ? nullptr : same[ctx.Below(same.size())];
}

// Adds an element to the repeated `field` of `message`: a copy of an
// element (or, for messages, of any message of its type), or a new value.
void AddElement(Message* message, const FieldDescriptor* field, const Tree& tree,
                MutationContext& ctx) {
  const Reflection* r = message->GetReflection();
  const int n = r->FieldSize(*message, field);
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    const Message* from = nullptr;
    if (n > 0 && ctx.Below(2) == 0) {
      from = &r->GetRepeatedMessage(*message, field, static_cast<int>(ctx.Below(n)));
    } else {
      from = SameType(tree, field->message_type(), nullptr, ctx);
    }
    // Copied before AddMessage: adding can move the elements `from` is among.
    std::unique_ptr<Message> copy;
    if (from != nullptr) {
      copy.reset(from->New());
      copy->CopyFrom(*from);
    }
    Message* added = r->AddMessage(message, field);
    if (copy != nullptr) added->CopyFrom(*copy);
    return;
  }
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      r->AddInt32(message, field, 0);
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      r->AddInt64(message, field, 0);
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      r->AddUInt32(message, field, 0);
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      r->AddUInt64(message, field, 0);
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      r->AddDouble(message, field, 0);
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      r->AddFloat(message, field, 0);
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      r->AddBool(message, field, false);
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      r->AddEnumValue(message, field, 0);
      break;
    case FieldDescriptor::CPPTYPE_STRING:
      r->AddString(message, field, "");
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return;
  }
  SetScalar(message, field, n, tree, ctx);
}

// Changes the repeated `field` of `message` as a whole.
void MutateRepeated(Message* message, const FieldDescriptor* field, const Tree& tree,
                    MutationContext& ctx) {
  const Reflection* r = message->GetReflection();
  const int n = r->FieldSize(*message, field);
  switch (n == 0 ? 0 : ctx.Below(4)) {
    case 0:
      AddElement(message, field, tree, ctx);
      break;
    case 1:  // drop one
      r->SwapElements(message, field, static_cast<int>(ctx.Below(n)), n - 1);
      r->RemoveLast(message, field);
      break;
    case 2:  // swap two
      r->SwapElements(message, field, static_cast<int>(ctx.Below(n)),
                      static_cast<int>(ctx.Below(n)));
      break;
    default:
      r->ClearField(message, field);
      break;
  }
}

// Changes the singular message `field` of `message`: set (empty) when
// unset, cleared, or a copy of another message of its type.
void MutateSubmessage(Message* message, const FieldDescriptor* field, const Tree& tree,
                      MutationContext& ctx) {
  const Reflection* r = message->GetReflection();
  if (!r->HasField(*message, field)) {
    r->MutableMessage(message, field);
    return;
  }
  const Message* self = &r->GetMessage(*message, field);
  const Message* other =
      ctx.Below(2) == 0 ? SameType(tree, field->message_type(), self, ctx) : nullptr;
  if (other == nullptr) {
    r->ClearField(message, field);
    return;
  }
  // `other` may lie inside the field being overwritten: copy it out first.
  std::unique_ptr<Message> copy(other->New());
  copy->CopyFrom(*other);
  r->MutableMessage(message, field)->CopyFrom(*copy);
}

}  // namespace

bool MutateMessage(Message* message, MutationContext& ctx) {
  const Tree tree = TreeOf(message);
  if (tree.sites.empty()) return false;
  const Site site = tree.sites[ctx.Below(tree.sites.size())];
  const bool is_message = site.field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
  if (site.index >= 0) {
    if (is_message) {
      // An element of a repeated message field: copy it (MutateRepeated
      // adds copies) or change something inside it, which the walk reached.
      MutateRepeated(site.message, site.field, tree, ctx);
    } else {
      SetScalar(site.message, site.field, site.index, tree, ctx);
    }
  } else if (site.field->is_repeated()) {
    MutateRepeated(site.message, site.field, tree, ctx);
  } else if (is_message) {
    MutateSubmessage(site.message, site.field, tree, ctx);
  } else if (site.field->containing_oneof() != nullptr && ctx.Below(4) == 0) {
    site.message->GetReflection()->ClearField(site.message, site.field);
  } else {
    SetScalar(site.message, site.field, -1, tree, ctx);
  }
  return true;
}

std::optional<std::string> MutateProto(const std::string& input, const Message& prototype,
                                       ProtoFormat format, MutationContext& ctx) {
  std::unique_ptr<Message> message(prototype.New());
  bool text = false;
  if (!message->ParseFromString(input)) {
    message->Clear();
    if (format != ProtoFormat::kBinaryOrText ||
        !google::protobuf::TextFormat::ParseFromString(input, message.get())) {
      return std::nullopt;
    }
    text = true;
  }
  const auto serialize = [text](const Message& m) {
    std::string out;
    if (text) {
      google::protobuf::TextFormat::Printer printer;
      printer.SetSingleLineMode(true);
      printer.PrintToString(m, &out);
      return out;
    }
    {  // the streams hand `out` its final size when they close
      google::protobuf::io::StringOutputStream stream(&out);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      m.SerializeToCodedStream(&coded);
    }
    return out;
  };
  // Some changes change nothing (swapping two map entries, setting a field
  // to its value): mutate again until the message differs, a few times.
  const std::string before = serialize(*message);
  std::string out = before;
  for (int round = 0; round < 8 && out == before; ++round) {
    const int changes = 1 + static_cast<int>(ctx.Below(3));
    for (int i = 0; i < changes; ++i) MutateMessage(message.get(), ctx);
    out = serialize(*message);
  }
  return out;
}

// ----------------------------------------------------------------- records

namespace {

uint64_t LittleEndian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

std::optional<std::vector<std::string>> SplitRecords(const std::string& file) {
  std::vector<std::string> records;
  size_t at = 0;
  while (at < file.size()) {
    if (file.size() - at < 16) return std::nullopt;
    const uint64_t length = LittleEndian(file.data() + at, 8);
    if (length > file.size() - at - 16) return std::nullopt;
    records.push_back(file.substr(at + 12, length));
    at += 16 + length;
  }
  return records;
}

std::string JoinRecords(const std::vector<std::string>& records) {
  std::string file;
  for (const std::string& r : records) file += EncodeRecord(r);
  return file;
}

std::optional<std::string> MutateRecords(
    const std::string& input, MutationContext& ctx,
    const std::function<std::string(const std::string&)>& mutate_payload) {
  std::optional<std::vector<std::string>> records = SplitRecords(input);
  if (!records) return std::nullopt;
  std::vector<std::string>& r = *records;
  const size_t n = r.size();
  switch (n == 0 ? 0 : ctx.Below(8)) {
    case 0:  // a record added: a copy, or empty
      r.insert(r.begin() + ctx.Below(n + 1), n == 0 ? std::string() : r[ctx.Below(n)]);
      break;
    case 1:  // one dropped
      r.erase(r.begin() + ctx.Below(n));
      break;
    case 2:  // two swapped
      std::swap(r[ctx.Below(n)], r[ctx.Below(n)]);
      break;
    default: {
      std::string& payload = r[ctx.Below(n)];
      payload = mutate_payload(payload);
      break;
    }
  }
  return JoinRecords(r);
}

}  // namespace fuzz
}  // namespace towerflow
