// Readers for the datasets the examples train on.
//
//   // Fashion-MNIST as Debian's dataset-fashion-mnist installs it:
//   TW_ASSIGN_OR_RETURN(Dataset train, MnistDataset(
//       "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz",
//       "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz"));
//   TW_ASSIGN_OR_RETURN(Dataset cifar, Cifar10Dataset({dir + "/data_batch_1.bin"}));
//   TW_ASSIGN_OR_RETURN(Dataset records, TFRecordDataset({path}));
//
// Corrupt or truncated files are DataLoss naming the file; a file that
// cannot be opened is NotFound / PermissionDenied naming it. The file
// checks that need no decoding run when the dataset is made; record-level
// corruption surfaces from GetNext, ending the pass.
#ifndef TOWERFLOW_DATA_READERS_H_
#define TOWERFLOW_DATA_READERS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/record_io.h"
#include "data/dataset.h"
#include "framework/tensor.h"

namespace towerflow {
namespace data {

// An IDX file (the MNIST format: big-endian header 0, 0, type, rank, then
// rank uint32 dimensions and the big-endian values), gzip-compressed or
// not. Types 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float,
// 0x0E double.
absl::StatusOr<Tensor> ReadIdxFile(const std::string& path);

// MNIST-style images and labels: elements {image uint8 [rows, cols, 1],
// label int32 scalar}. InvalidArgument when the files disagree on the
// number of examples or are not images [n, rows, cols] / labels [n] of
// uint8.
absl::StatusOr<Dataset> MnistDataset(const std::string& images_path,
                                     const std::string& labels_path);

// CIFAR-10 binary batches (data_batch_1.bin ... test_batch.bin): records of
// 1 label byte and 3072 pixel bytes (red, green, blue planes of 32x32),
// read as elements {image uint8 [32, 32, 3], label int32 scalar}, file by
// file. A file whose size is not a whole number of records, or a label
// above 9, is DataLoss.
inline constexpr int64_t kCifar10RecordBytes = 1 + 32 * 32 * 3;
absl::StatusOr<Dataset> Cifar10Dataset(const std::vector<std::string>& files);

// TFRecord files, CRC-checked (core/record_io.h): one element per record,
// {record string scalar}. `compression`: as the files were written (TF's
// compression_type "ZLIB" or "GZIP"; ParseRecordCompression reads TF's names).
absl::StatusOr<Dataset> TFRecordDataset(const std::vector<std::string>& files,
                                        RecordCompression compression = RecordCompression::kNone);

}  // namespace data
}  // namespace towerflow

#endif  // TOWERFLOW_DATA_READERS_H_
