// What the executor knows of each node and frame of its graph, compiled
// once by Executor::Initialize (runtime/executor_init.cc) and read by every
// step (runtime/executor.cc). Internal to the executor.
#ifndef TOWERFLOW_RUNTIME_EXECUTOR_INTERNAL_H_
#define TOWERFLOW_RUNTIME_EXECUTOR_INTERNAL_H_

#include <memory>
#include <string>
#include <vector>

#include "framework/kernel.h"
#include "framework/kernel_context.h"
#include "framework/memory_types.h"
#include "graph/graph.h"
#include "runtime/executor.h"

namespace towerflow {

struct Executor::FrameInfo {
  std::string name;          // frame_name; "" for the root
  int num_enters = 0;        // Enter nodes into the frame
  int num_slots = 0;         // input slots of its nodes
  std::vector<int> pending;  // initial pending count by local id
};

struct Executor::NodeItem {
  const Node* node = nullptr;
  // Shared with another executor's node of the same name and attrs when it
  // was made from one (Executor::Create's `kernels_from`).
  std::shared_ptr<OpKernel> kernel;
  bool expensive = true;
  bool async = false;
  int num_inputs = 0;
  int frame = 0;                  // FrameInfo index
  int local_id = 0;               // index among the frame's nodes
  int input_start = 0;            // first of this node's slots in its frame's inputs
  std::vector<bool> ref_input;    // input slot i expects a Ref(T) (a variable)
  MemoryTypeVector input_memory;  // on devices with memory of its own
  MemoryTypeVector output_memory;
  struct OutEdge {
    int src_output;
    int dst_item;
    int dst_slot;  // slot index in the destination's frame
  };
  std::vector<OutEdge> out_edges;
  std::vector<int> out_controls;  // dst items
  // By output, when any output's one consumer takes it in a buffer of its
  // own (OpKernel::TakesInputBuffers); else empty.
  std::vector<InputBufferSink> output_sinks;
  bool is_merge = false;
  bool is_enter = false;
  bool is_constant_enter = false;
  bool is_exit = false;
  bool is_next_iteration = false;
  bool is_control_trigger = false;
  bool is_transfer = false;      // _Send / _Recv: run even when dead
  bool may_leave_unset = false;  // Switch, _Recv: unset outputs are dead
  int child_frame = -1;          // Enter: the frame it enters
  int parallel_iterations = 1;   // Enter
};

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_EXECUTOR_INTERNAL_H_
