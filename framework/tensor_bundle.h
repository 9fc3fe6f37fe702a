// TensorFlow's V2 checkpoint format (a "tensor bundle"), read and written
// byte for byte as TensorFlow does (core/util/tensor_bundle/).
//
//   TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleWriter> w, BundleWriter::Create(prefix));
//   TW_RETURN_IF_ERROR(w->Add("dense/kernel", kernel));
//   TW_RETURN_IF_ERROR(w->Finish());
//
//   TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> r, BundleReader::Open(prefix));
//   TW_ASSIGN_OR_RETURN(Tensor kernel, r->Read("dense/kernel"));
//
// Note [Tensor bundle format]
// A bundle with prefix P is two kinds of file:
//   P.index                 a LevelDB-format table (TF's core/lib/io/table is
//                           LevelDB's format): sorted keys, blocks of 256 KiB,
//                           each with a type byte and a masked CRC-32C, a
//                           48-byte footer. Key "" holds a BundleHeaderProto
//                           (num_shards, endianness, version {producer: 1});
//                           every other key is a tensor name whose value is a
//                           BundleEntryProto (dtype, shape, shard_id, offset,
//                           size, masked CRC-32C of the bytes, slices).
//   P.data-0000k-of-0000N   the tensors' bytes, one after another in the
//                           order they were added, no padding. A number
//                           tensor is its row-major little-endian elements; a
//                           string tensor is every length as a varint64, a
//                           masked CRC-32C (4 bytes) of the lengths taken as
//                           uint32s, then the strings' bytes. Its entry's
//                           CRC covers the lengths as uint32s, the stored
//                           length CRC and the bytes.
// The table is Debian's LevelDB (libleveldb): its TableBuilder with TF 1.x's
// options (block_size 262144, restart interval 16, snappy compression, kept
// only where it saves an eighth) reproduces TF's index files byte for byte,
// and its Table reads uncompressed blocks (what TF 2 writes) and
// snappy-compressed ones alike, checking every block's CRC. What LevelDB does not check itself is
// checked here before it reads: the footer's block handles must lie inside the file.
//
// Crash safety: Finish writes the data file and then the index, each to a
// temporary file that is fsynced and renamed into place (core/file_io.h).
// The index is the commit point: a reader opens nothing without it, and a
// kill before it is renamed leaves no index (at most an unreferenced data
// file).
//
// Errors: anything malformed in either file is DataLoss naming the file and,
// where there is one, the tensor; never a crash or an allocation larger
// than the file. Tensors saved in slices (TF's partitioned variables) are
// listed but reading one is Unimplemented. Big-endian bundles are
// Unimplemented.
//
// Thread-compatible.
#ifndef TOWERFLOW_FRAMEWORK_TENSOR_BUNDLE_H_
#define TOWERFLOW_FRAMEWORK_TENSOR_BUNDLE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/file_io.h"
#include "framework/tensor.h"
#include "proto/tensor_bundle.pb.h"

namespace towerflow {

// "<prefix>.index".
std::string BundleIndexPath(absl::string_view prefix);
// "<prefix>.data-<shard>-of-<num_shards>", five digits each.
std::string BundleDataPath(absl::string_view prefix, int shard, int num_shards);

// The index file's table itself, for tools and fuzzing (fuzz/): its keys
// and values in order -- the BundleHeaderProto under key "", then each
// tensor's BundleEntryProto -- read with the checks BundleReader::Open makes
// on the table (DataLoss naming `path`; the values are not parsed here) ...
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReadBundleIndexTable(
    const std::string& bytes, const std::string& path);
// ... and the index file holding `table`, as BundleWriter writes it.
// REQUIRES: keys sorted and unique.
std::string BuildBundleIndexTable(const std::vector<std::pair<std::string, std::string>>& table);

// Writes a one-shard bundle (what SaveV2 writes).
class BundleWriter {
 public:
  // Creates the prefix's directory and opens the data file's temporary.
  static absl::StatusOr<std::unique_ptr<BundleWriter>> Create(const std::string& prefix);

  // Appends `tensor`'s bytes. InvalidArgument for an empty or duplicate name
  // or a dtype a checkpoint cannot hold (resources, variants, refs).
  absl::Status Add(const std::string& name, const Tensor& tensor);

  // Commits the data file, then the index (see the file comment). No Add
  // after it.
  absl::Status Finish();

  const std::string& prefix() const { return prefix_; }

 private:
  BundleWriter(std::string prefix, std::unique_ptr<AtomicFileWriter> data)
      : prefix_(std::move(prefix)), data_(std::move(data)) {}

  std::string prefix_;
  std::unique_ptr<AtomicFileWriter> data_;
  std::map<std::string, BundleEntryProto> entries_;
  bool finished_ = false;
};

// Reads a bundle of any number of shards.
class BundleReader {
 public:
  // Reads and checks the index: NotFound when "<prefix>.index" does not
  // exist, DataLoss naming it when it is not a valid bundle index,
  // Unimplemented for a big-endian bundle or a newer format version.
  static absl::StatusOr<std::unique_ptr<BundleReader>> Open(const std::string& prefix);
  ~BundleReader();

  const std::string& prefix() const { return prefix_; }
  const BundleHeaderProto& header() const { return header_; }
  // Tensor name -> entry, in the index's (sorted) order; dtypes and shapes
  // are checked at Open.
  const std::map<std::string, BundleEntryProto>& entries() const { return entries_; }

  // NotFound "Key <name> not found in checkpoint <prefix>".
  absl::StatusOr<const BundleEntryProto*> Lookup(const std::string& name) const;
  // The entry's shape (valid: checked at Open).
  static TensorShape ShapeOf(const BundleEntryProto& entry);

  // Reads and checks one tensor: DataLoss naming the data file and the tensor
  // for a missing or short shard, a bad CRC or malformed string lengths.
  absl::StatusOr<Tensor> Read(const std::string& name);

 private:
  class DataFile;
  explicit BundleReader(std::string prefix);
  absl::StatusOr<DataFile*> Shard(int shard);

  std::string prefix_;
  BundleHeaderProto header_;
  std::map<std::string, BundleEntryProto> entries_;
  std::map<int, std::unique_ptr<DataFile>> shards_;
};

// TF's MergeV2Checkpoints: merges one-shard-or-more bundles with distinct
// tensor names into one bundle at `merged_prefix`, renaming their data files
// to its shards and deleting their indexes. InvalidArgument for a tensor in
// two bundles or nothing to merge; each source is opened with
// BundleReader::Open and fails as it does (so a big-endian source is
// Unimplemented); Unimplemented for sliced tensors.
absl::Status MergeBundles(const std::vector<std::string>& prefixes,
                          const std::string& merged_prefix);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_TENSOR_BUNDLE_H_
