#include "estimator/testing/job_testing.h"

#include <vector>

#include "distribute/cluster.h"
#include "gtest/gtest.h"
#include "train/checkpoint.h"

namespace towerflow {
namespace testing {

std::map<std::string, Tensor> LatestCheckpointTensors(const std::string& model_dir) {
  std::map<std::string, Tensor> out;
  absl::StatusOr<std::string> latest = LatestCheckpoint(model_dir);
  EXPECT_TRUE(latest.ok()) << latest.status();
  if (!latest.ok()) return out;
  absl::StatusOr<std::vector<NamedTensor>> tensors = ReadCheckpoint(*latest);
  EXPECT_TRUE(tensors.ok()) << tensors.status();
  if (!tensors.ok()) return out;
  for (const auto& t : *tensors) out[t.name] = t.tensor;
  return out;
}

int64_t SumOverProcesses(int64_t value) {
  absl::StatusOr<distribute::Cluster*> cluster = distribute::Cluster::Get();
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return -1;
  Tensor t(DT_INT64, TensorShape({1}));
  t.data<int64_t>()[0] = value;
  const absl::Status summed = (*cluster)->AllReduceSum(&t);
  EXPECT_TRUE(summed.ok()) << summed;
  return summed.ok() ? t.data<int64_t>()[0] : -1;
}

}  // namespace testing
}  // namespace towerflow
