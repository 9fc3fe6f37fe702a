// Helpers of the tests that train across the processes of a job (under
// mpirun) with the Estimator: what a checkpoint holds, and a number summed
// over the processes. Test-only (//estimator/testing:job_testing).
#ifndef TOWERFLOW_ESTIMATOR_TESTING_JOB_TESTING_H_
#define TOWERFLOW_ESTIMATOR_TESTING_JOB_TESTING_H_

#include <cstdint>
#include <map>
#include <string>

#include "framework/tensor.h"

namespace towerflow {
namespace testing {

// The tensors of model_dir's latest checkpoint by name; a failed gtest
// expectation (and an empty map) when there is none or it does not read.
std::map<std::string, Tensor> LatestCheckpointTensors(const std::string& model_dir);

// `value` summed over every process of the cluster (a collective: every
// process calls it); -1 and a failed expectation when the sum fails.
int64_t SumOverProcesses(int64_t value);

}  // namespace testing
}  // namespace towerflow

#endif  // TOWERFLOW_ESTIMATOR_TESTING_JOB_TESTING_H_
