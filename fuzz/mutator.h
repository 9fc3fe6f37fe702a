// Mutations of fuzz inputs: bytes (any input), and structure-aware ones for
// inputs whose framing a byte change almost always breaks -- binary and text
// Protocol Buffers, TFRecord files (every record behind a length and two
// masked CRC-32Cs) -- so that mutants get past the parser and the checksums
// to the code behind them.
//
// Note [Structure-aware mutation]
// A bit flip in a binary GraphDef usually makes a varint or a length that
// no longer parses; one in a TFRecord payload fails its CRC. Either way the
// mutant tests the first check and nothing after it. A target that knows its
// input's structure (fuzz_target.h: Target::mutate) parses the input,
// changes one thing in the parsed form -- a field set to a value that broke
// TensorFlow (2^31, 2^62, -1, NaN), a repeated element added, dropped,
// copied or swapped, a string taken from another field (node names into
// inputs), a message cleared or copied, a record's payload mutated, a
// record duplicated or dropped -- and writes it back in the same format
// with valid framing. Bytes it mutates as bytes (a string field's value, an
// unparsable payload) go through MutationContext::MutateBytes. The driver
// uses a target's structured mutation for half of its mutants (bytes for the
// rest, so the framing checks themselves stay fuzzed); a libFuzzer build
// uses it as LLVMFuzzerCustomMutator (fuzz/entry.cc).
//
//   std::optional<std::string> MutateGraph(const std::string& in, MutationContext& ctx) {
//     return MutateProto(in, GraphDef::default_instance(), ProtoFormat::kBinaryOrText, ctx);
//   }
//
// Thread-compatible.
#ifndef TOWERFLOW_FUZZ_MUTATOR_H_
#define TOWERFLOW_FUZZ_MUTATOR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "google/protobuf/message.h"

namespace towerflow {
namespace fuzz {

// Randomness and byte-level mutation, for a structure-aware mutation.
class MutationContext {
 public:
  virtual ~MutationContext() = default;
  // A uniform integer in [0, n); 0 when n is 0.
  virtual uint64_t Below(uint64_t n) = 0;
  // A byte-level mutant of `piece` (may be empty, longer or shorter).
  virtual std::string MutateBytes(const std::string& piece) = 0;
};

// Byte-level mutation: bit flips, byte and decimal-number substitutions
// (the integers that broke TensorFlow: 2^31, 2^32, 2^62, -1...), varints,
// erasures, insertions, copies inside the input and splices from others.
class ByteMutator : public MutationContext {
 public:
  explicit ByteMutator(uint64_t seed) : rng_(seed) {}
  ByteMutator(const ByteMutator&) = delete;
  ByteMutator& operator=(const ByteMutator&) = delete;

  // 1 to 4 mutations of `in`, splicing from `corpus` (may be empty); at most
  // `max_len` bytes.
  std::string Mutate(const std::string& in, const std::vector<std::string>& corpus, size_t max_len);

  uint64_t Below(uint64_t n) override { return n == 0 ? 0 : rng_() % n; }
  // Mutate(piece) without splices, at most 4096 bytes longer than `piece`.
  std::string MutateBytes(const std::string& piece) override;

 private:
  void Step(std::string* s, const std::vector<std::string>& corpus);

  std::mt19937_64 rng_;
};

enum class ProtoFormat {
  kBinary,
  // Binary when the input parses as binary, else text; the mutant keeps the
  // format of its input (the targets parse the same way).
  kBinaryOrText,
};

// One structural change to `message` (see the Note): a field anywhere in
// its tree -- set or not, singular or repeated, inside maps -- picked at
// random and changed. Returns false when nothing could be changed.
bool MutateMessage(google::protobuf::Message* message, MutationContext& ctx);

// `input` parsed as `prototype`'s type, changed by MutateMessage (one to
// three times) and serialized again (deterministically, in the same
// format); nullopt when `input` does not parse.
std::optional<std::string> MutateProto(const std::string& input,
                                       const google::protobuf::Message& prototype,
                                       ProtoFormat format, MutationContext& ctx);

// The records of a TFRecord file (each: uint64 length, masked CRC-32C of
// the length, data, masked CRC-32C of the data, little-endian); nullopt
// when the framing or a CRC is wrong.
std::optional<std::vector<std::string>> SplitRecords(const std::string& file);
// The TFRecord file of `records`, with valid lengths and CRCs.
std::string JoinRecords(const std::vector<std::string>& records);

// `input` as TFRecords, with one record duplicated, dropped or swapped with
// another, or one record's data replaced by `mutate_payload(data)`; the
// file is framed again with valid CRCs. nullopt when `input` is not a valid
// TFRecord file.
std::optional<std::string> MutateRecords(
    const std::string& input, MutationContext& ctx,
    const std::function<std::string(const std::string&)>& mutate_payload);

}  // namespace fuzz
}  // namespace towerflow

#endif  // TOWERFLOW_FUZZ_MUTATOR_H_
