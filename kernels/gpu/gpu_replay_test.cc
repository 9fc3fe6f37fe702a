// Replayed steps (runtime/step_replay.h) on a GPU, kernel by kernel: each
// case of the conformance suite recorded alone and replayed on new inputs
// written into the recording's slots, against the same op run eagerly on
// those inputs. Under compute-sanitizer (tools/gpu_check.sh replay) this is
// also the memcheck of replays. Skipped without a GPU.
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/float16.h"
#include "core/proto_io.h"
#include "core/types.h"
#include "framework/device.h"
#include "framework/tensor_float32.h"
#include "gtest/gtest.h"
#include "kernels/gpu/testing/conformance_cases.h"
#include "kernels/gpu/testing/conformance_harness.h"
#include "runtime/session.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using conformance::Agree;
using conformance::AllCases;
using conformance::Case;
using conformance::InputText;
using conformance::NodeText;
using conformance::RandomFloats;

// Ops whose GPU kernels are not capturable (Note [Capturable GPU kernels]).
bool NotCapturable(const std::string& op) { return op == "Where" || op == "TopKV2"; }

// The dtype a case's float input is fed as: float, or the 16-bit type of
// its half and bfloat16 twins (conformance::Floats16).
DataType FedType(const conformance::Input& in) {
  const std::string dtype = in.dtype;
  return dtype == "DT_HALF" ? DT_HALF : dtype == "DT_BFLOAT16" ? DT_BFLOAT16 : DT_FLOAT;
}

// Random values of a float input, in its fed dtype.
Tensor RandomInput(const conformance::Input& in, std::mt19937* rng) {
  const Tensor floats = RandomFloats(in, rng);
  const DataType dtype = FedType(in);
  if (dtype == DT_FLOAT) return floats;
  Tensor out(dtype, floats.shape());
  for (int64_t i = 0; i < floats.NumElements(); ++i) {
    if (dtype == DT_HALF) {
      out.data<half>()[i] = half(floats.data<float>()[i]);
    } else {
      out.data<bfloat16>()[i] = bfloat16(floats.data<float>()[i]);
    }
  }
  return out;
}

// Case `c`'s op alone on the GPU with its inputs `inputs` ("in0", ...):
// placeholders for the float ones (their indices in `fed`), constants on
// the GPU for the others.
std::string CaseGraphText(const Case& c, std::mt19937* rng, std::vector<std::string>* inputs,
                          std::vector<int>* fed) {
  std::string text;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs->push_back(absl::StrCat("in", i));
    if (c.inputs[i].is_int) {
      text += InputText(inputs->back(), c.inputs[i], rng, "/device:GPU:0");
    } else {
      text += NodeText(inputs->back(), "Placeholder", {}, "/device:GPU:0",
                       absl::StrCat("attr { key: 'dtype' value { type: ",
                                    DataType_Name(FedType(c.inputs[i])), " } }"));
      fed->push_back(static_cast<int>(i));
    }
  }
  return text + NodeText("op", c.op, *inputs, "/device:GPU:0", c.attrs);
}

// Each case's op alone on the GPU, recorded (runtime/step_replay.h) and
// replayed on new inputs written into the recording's slots: the values the
// same op gives run eagerly on those inputs. Float inputs are fed, the
// others are constants on the GPU (int32 ones in host memory, as a GPU
// node's shapes and axes are). Under compute-sanitizer (tools/gpu_check.sh)
// this is also the memcheck of replays.
TEST(GpuReplayTest, EveryCaseReplaysAsItRunsEagerly) {
  if (NumLocalDevices(kDeviceGpu) == 0) GTEST_SKIP() << "no GPU on this machine";
  EnableTensorFloat32Execution(false);
  SessionOptions eager_options;
  eager_options.device_count[kDeviceGpu] = 1;
  SessionOptions replay_options = eager_options;
  replay_options.replay.enabled = true;
  replay_options.replay.warmup_steps = 1;
  replay_options.replay.log = false;
  std::mt19937 rng(17);
  int replayed = 0, not_capturable = 0;
  std::vector<std::string> refused;
  const std::vector<Case> cases = AllCases();
  for (const Case& c : cases) {
    std::vector<std::string> inputs;
    std::vector<int> fed;  // indices of c.inputs that are fed
    const std::string text = CaseGraphText(c, &rng, &inputs, &fed);
    std::vector<std::string> fetches;
    for (int j = 0; j < c.num_outputs; ++j) fetches.push_back(absl::StrCat("op:", j));
    GraphDef graph;
    TW_ASSERT_OK(ParseTextProto(text, &graph));
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> eager, NewSession(eager_options));
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> replay, NewSession(replay_options));
    TW_ASSERT_OK(eager->Create(graph));
    TW_ASSERT_OK(replay->Create(graph));
    RunMetadata metadata;
    for (int run = 0; run < 4; ++run) {
      std::vector<std::pair<std::string, Tensor>> feeds;
      for (int i : fed) feeds.push_back({inputs[i], RandomInput(c.inputs[i], &rng)});
      std::vector<Tensor> want, got;
      TW_ASSERT_OK(eager->Run(feeds, fetches, {}, &want)) << c.name;
      TW_ASSERT_OK(replay->Run(RunOptions(), feeds, fetches, {}, &got, &metadata)) << c.name;
      for (size_t j = 0; j < want.size(); ++j) {
        EXPECT_TRUE(Agree(got[j], want[j], c.tolerance, c.of_largest))
            << c.name << " run " << run << " output " << j;
      }
    }
    if (metadata.replay.mode == StepReplayReport::Mode::kReplayed) {
      ++replayed;
    } else if (NotCapturable(c.op)) {
      ++not_capturable;
    } else {
      refused.push_back(absl::StrCat(c.name, ": ", metadata.replay.why_eager));
    }
  }
  EXPECT_TRUE(refused.empty()) << absl::StrJoin(refused, "\n");
  EXPECT_EQ(replayed + not_capturable, static_cast<int>(cases.size()));
}

// On any machine: every case's graph parses, and a fed input's values have
// the placeholder's dtype.
TEST(GpuReplayTest, EveryCaseGraphParses) {
  std::mt19937 rng(17);
  for (const Case& c : AllCases()) {
    std::vector<std::string> inputs;
    std::vector<int> fed;
    GraphDef graph;
    TW_ASSERT_OK(ParseTextProto(CaseGraphText(c, &rng, &inputs, &fed), &graph)) << c.name;
    for (int i : fed) {
      EXPECT_EQ(graph.node(i).attr().at("dtype").type(), RandomInput(c.inputs[i], &rng).dtype())
          << c.name << " input " << i;
    }
  }
}

}  // namespace
}  // namespace towerflow
