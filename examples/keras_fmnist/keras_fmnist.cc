// A Keras-style CNN on Fashion-MNIST, replicated on two virtual CPUs:
//
//   keras_fmnist [--data_dir=/usr/share/datasets/fashion-mnist] [--epochs=12]
//                [--replicas=2] [--limit=N (train on the first N images)]
//
// --help lists the flags with their defaults.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "data/readers.h"
#include "distribute/cluster.h"
#include "keras/model.h"
#include "tools/flags.h"
#include "train/optimizers.h"

ABSL_FLAG(std::string, data_dir, "/usr/share/datasets/fashion-mnist",
          "Fashion-MNIST's gzip'd IDX files (Debian's dataset-fashion-mnist)");
ABSL_FLAG(int32_t, epochs, 12, "passes over the training images");
ABSL_FLAG(int32_t, replicas, 2, "replicas of the model, each on a virtual CPU of its own");
ABSL_FLAG(int64_t, limit, 0, "train and test on the first N images of each split (0: all)");

namespace towerflow {
namespace {

struct Split {
  Tensor x;  // float [n, 28, 28, 1] in [0, 1]
  Tensor y;  // int32 [n]
};

// IDX images and labels, the first `limit` (0: all).
absl::StatusOr<Split> Load(const std::string& dir, const std::string& prefix, int64_t limit) {
  TW_ASSIGN_OR_RETURN(Tensor images,
                      data::ReadIdxFile(dir + "/" + prefix + "-images-idx3-ubyte.gz"));
  TW_ASSIGN_OR_RETURN(Tensor labels,
                      data::ReadIdxFile(dir + "/" + prefix + "-labels-idx1-ubyte.gz"));
  if (images.dtype() != DT_UINT8 || images.dims() != 3 || labels.dtype() != DT_UINT8 ||
      labels.dims() != 1 || labels.dim_size(0) != images.dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Fashion-MNIST files in ", dir, " are not uint8 images [n, 28, 28] and labels [n]"));
  }
  int64_t n = images.dim_size(0);
  if (limit > 0 && limit < n) n = limit;
  const int64_t pixels = images.dim_size(1) * images.dim_size(2);
  Split s{Tensor(DT_FLOAT, TensorShape({n, images.dim_size(1), images.dim_size(2), 1})),
          Tensor(DT_INT32, TensorShape({n}))};
  for (int64_t i = 0; i < n * pixels; ++i) s.x.data<float>()[i] = images.data<uint8_t>()[i] / 255.f;
  for (int64_t i = 0; i < n; ++i) s.y.data<int32_t>()[i] = labels.data<uint8_t>()[i];
  return s;
}

absl::Status Main(const std::string& dir, int epochs, int replicas, int64_t limit) {
  TW_ASSIGN_OR_RETURN(Split train, Load(dir, "train", limit));
  TW_ASSIGN_OR_RETURN(Split test, Load(dir, "t10k", limit));
  // The model and its training: what a Keras user writes.
  keras::Sequential model({28, 28, 1}, {
                                           keras::Conv2D(32, 3, {.activation = "relu"}),
                                           keras::MaxPooling2D(2),
                                           keras::Conv2D(64, 3, {.activation = "relu"}),
                                           keras::MaxPooling2D(2),
                                           keras::Flatten(),
                                           keras::Dropout(0.3),
                                           keras::Dense(128, {.activation = "relu"}),
                                           keras::Dense(10, {.activation = "softmax"}),
                                       });
  TW_RETURN_IF_ERROR(model.SetRandomSeed(1));  // the same run every time
  TW_RETURN_IF_ERROR(model.Compile(std::make_shared<train::AdamOptimizer>(1e-3),
                                   "sparse_categorical_crossentropy", {"accuracy"}));
  keras::Model replicated = keras::ReplicatedModel(model, {.replicas = replicas});
  // Under mpirun the processes' replicas train as one model, each process
  // on its rows of every batch; rank 0 alone prints.
  TW_ASSIGN_OR_RETURN(distribute::Cluster * cluster, distribute::Cluster::Get());
  std::ostringstream quiet;
  std::ostream& out = cluster->is_chief() ? std::cout : quiet;
  TW_ASSIGN_OR_RETURN(std::string summary, replicated.Summary());
  out << summary;
  TW_RETURN_IF_ERROR(replicated
                         .Fit(train.x, train.y,
                              {.batch_size = 128,
                               .epochs = epochs,
                               .seed = 1,
                               .validation_x = &test.x,
                               .validation_y = &test.y})
                         .status());
  TW_ASSIGN_OR_RETURN(auto metrics, replicated.Evaluate(test.x, test.y, 128));
  out << "test loss " << metrics["loss"] << ", test accuracy " << metrics["accuracy"] << " ("
      << (cluster->size() > 1 ? absl::StrCat(cluster->size(), " processes of ") : "") << replicas
      << " replicas)\n";
  return absl::OkStatus();
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  const std::vector<std::string> args = towerflow::ParseCommandLine(
      argc, argv,
      "keras_fmnist: a Keras-style CNN on Fashion-MNIST, replicated (tpu_model's replicas = N).\n\n"
      "usage: keras_fmnist [FLAGS]");
  if (!args.empty()) {
    std::cerr << "keras_fmnist: unexpected argument '" << args[0] << "' (--help lists the flags)\n";
    return 2;
  }
  const absl::Status s = towerflow::Main(absl::GetFlag(FLAGS_data_dir), absl::GetFlag(FLAGS_epochs),
                                         absl::GetFlag(FLAGS_replicas), absl::GetFlag(FLAGS_limit));
  if (!s.ok()) {
    std::cerr << "keras_fmnist: " << s << "\n";
    return 1;
  }
  return 0;
}
