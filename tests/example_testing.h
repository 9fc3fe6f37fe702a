// tf.Example protos in tests: serving signatures and ParseExample take them
// serialized.
//
//   Tensor examples = FloatExamples("x", {1, 2, 5});  // string [3]
#ifndef TOWERFLOW_TESTS_EXAMPLE_TESTING_H_
#define TOWERFLOW_TESTS_EXAMPLE_TESTING_H_

#include <string>
#include <vector>

#include "framework/tensor.h"
#include "proto/example.pb.h"

namespace towerflow {

// A string vector of serialized Examples, example i holding the float
// feature `key` = [values[i]].
inline Tensor FloatExamples(const std::string& key, const std::vector<float>& values) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    Example e;
    (*e.mutable_features()->mutable_feature())[key].mutable_float_list()->add_value(values[i]);
    t.data<std::string>()[i] = e.SerializeAsString();
  }
  return t;
}

}  // namespace towerflow

#endif  // TOWERFLOW_TESTS_EXAMPLE_TESTING_H_
