// Function calls run through a Session: TF 2's PartitionedCall,
// StatefulPartitionedCall, If, Case and While and library functions called by
// name, on GraphDefs written as TensorFlow writes them (FunctionDef bodies
// in TF's "node:output_arg:index" syntax). Expected values are worked out by
// hand.
#include <string>

#include "absl/strings/str_cat.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "testing/session_testing.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

std::string Const(const std::string& name, const std::string& type, const std::string& value) {
  return absl::StrCat("name: '", name, "' op: 'Const' attr { key: 'dtype' value { type: ", type,
                      " } } attr { key: 'value' value { tensor { dtype: ", type,
                      " tensor_shape {} ", value, " } } }");
}

std::string IntConst(const std::string& name, int value) {
  return Const(name, "DT_INT32", absl::StrCat("int_val: ", value));
}

const char kIntT[] = "attr { key: 'T' value { type: DT_INT32 } }";

// x + 1 and x * 2 on int32 (the If tests' branches); each reads a constant
// with no inputs, which must run in its branch's frame.
const std::string kBranches =
    absl::StrCat(R"pb(
                   function { signature {
                     name: 'PlusOne'
                     input_arg { name: 'x' type: DT_INT32 }
                     output_arg { name: 'y' type: DT_INT32 }
                   }
                              node_def {)pb",
                 IntConst("one", 1),
                 R"pb(}
                      node_def { name: 'add' op: 'AddV2' input: 'x' input: 'one:output:0' )pb",
                 kIntT, R"pb(}
                             ret { key: 'y' value: 'add:z:0' }
  }
  function {
    signature {
      name: 'TimesTwo'
      input_arg { name: 'x' type: DT_INT32 }
      output_arg { name: 'y' type: DT_INT32 }
    }
    node_def { )pb",
                 IntConst("two", 2),
                 R"pb(}
                      node_def { name: 'mul' op: 'Mul' input: 'x' input: 'two:output:0' )pb",
                 kIntT, R"pb(}
                             ret { key: 'y' value: 'mul:z:0' }
  })pb");

absl::StatusOr<std::vector<Tensor>> RunGraph(
    const std::string& graph, const std::vector<std::string>& fetches,
    const std::vector<std::pair<std::string, Tensor>>& feeds = {},
    const std::vector<std::string>& targets = {}) {
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, MakeSession(graph));
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(session->Run(feeds, fetches, targets, &out));
  return out;
}

const char kSeven[] = R"pb(
  library {
    function {
      signature {
        name: 'Seven'
        output_arg { name: 'out' type: DT_UINT8 }
      }
      node_def {
        name: 'seven'
        op: 'Const'
        attr {
          key: 'dtype'
          value { type: DT_UINT8 }
        }
        attr {
          key: 'value'
          value {
            tensor {
              dtype: DT_UINT8
              tensor_shape {}
              int_val: 7
            }
          }
        }
      }
      ret { key: 'out' value: 'seven:output:0' }
    }
  })pb";

std::string CallSeven(const std::string& tout) {
  return absl::StrCat(kSeven, R"pb(
                        node { name: 'call' op: 'PartitionedCall'
                               attr {
                                 key: 'Tin'
                                 value { list {} }
                               }
                               attr { key: 'Tout'
                                      value { list { type:)pb",
                      tout, R"pb(}
                                 } }
      attr { key: 'f' value { func { name: 'Seven' } } }
    })pb");
}

TEST(FunctionTest, PartitionedCallReturnsTheFunctionsUint8Constant) {
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunGraph(CallSeven("DT_UINT8"), {"call:0"}));
  EXPECT_THAT(out[0], TensorIs<uint8_t>({}, {7}));
}

TEST(FunctionTest, PolymorphicFunctionCalledByNameRunsForEachType) {
  const std::string graph =
      absl::StrCat(R"pb(
                     library {
                       function {
                         signature {
                           name: 'Twice'
                           input_arg { name: 'x' type_attr: 'T' }
                           output_arg { name: 'y' type_attr: 'T' }
                           attr { name: 'T' type: 'type' }
                         }
                         node_def {
                           name: 'sum'
                           op: 'AddV2'
                           input: 'x'
                           input: 'x'
                           attr {
                             key: 'T'
                             value { placeholder: 'T' }
                           }
                         }
                         ret { key: 'y' value: 'sum:z:0' }
                       }
                     }
                     node {)pb",
                   Const("f", "DT_FLOAT", "float_val: 1.25"), R"pb(}
                                                                   node { )pb",
                   IntConst("i", 21), R"pb(}
                                           node {
      name: 'twice_f'
      op: 'Twice'
      input: 'f'
      attr { key: 'T' value { type: DT_FLOAT } }
    }
    node {
      name: 'twice_i'
      op: 'Twice'
      input: 'i'
      attr { key: 'T' value { type: DT_INT32 } }
    })pb");
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunGraph(graph, {"twice_f", "twice_i"}));
  EXPECT_THAT(out[0], TensorIs<float>({}, {2.5f}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({}, {42}));
}

TEST(FunctionTest, ListArgumentsAndOutputArgumentIndices) {
  // xs: N floats. first = xs:0, third = unpack:output:2 (of Pack(xs)),
  // total = AddN(xs), all through TF's input syntax.
  const std::string graph =
      absl::StrCat(R"pb(
                     library {
                       function {
                         signature {
                           name: 'Parts'
                           input_arg { name: 'xs' type: DT_FLOAT number_attr: 'N' }
                           output_arg { name: 'first' type: DT_FLOAT }
                           output_arg { name: 'third' type: DT_FLOAT }
                           output_arg { name: 'total' type: DT_FLOAT }
                           attr { name: 'N' type: 'int' }
                         }
                         node_def {
                           name: 'pack'
                           op: 'Pack'
                           input: 'xs'
                           attr {
                             key: 'N'
                             value { placeholder: 'N' }
                           }
                           attr {
                             key: 'T'
                             value { type: DT_FLOAT }
                           }
                         }
                         node_def {
                           name: 'unpack'
                           op: 'Unpack'
                           input: 'pack:output:0'
                           attr {
                             key: 'num'
                             value { placeholder: 'N' }
                           }
                           attr {
                             key: 'T'
                             value { type: DT_FLOAT }
                           }
                         }
                         node_def {
                           name: 'add'
                           op: 'AddN'
                           input: 'unpack:output'
                           attr {
                             key: 'N'
                             value { placeholder: 'N' }
                           }
                           attr {
                             key: 'T'
                             value { type: DT_FLOAT }
                           }
                         }
                         ret { key: 'first' value: 'xs:0' }
                         ret { key: 'third' value: 'unpack:output:2' }
                         ret { key: 'total' value: 'add:sum:0' }
                       }
                     }
                     node {)pb",
                   Const("a", "DT_FLOAT", "float_val: 1"), R"pb(}
                                                                node { )pb",
                   Const("b", "DT_FLOAT", "float_val: 2"), R"pb(}
                                                                node { )pb",
                   Const("c", "DT_FLOAT", "float_val: 4"), R"pb(}
                                                                node {
      name: 'parts'
      op: 'StatefulPartitionedCall'
      input: 'a'
      input: 'b'
      input: 'c'
      attr { key: 'Tin' value { list { type: DT_FLOAT type: DT_FLOAT type: DT_FLOAT } } }
      attr { key: 'Tout' value { list { type: DT_FLOAT type: DT_FLOAT type: DT_FLOAT } } }
      attr {
        key: 'f'
        value {
          func {
            name: 'Parts'
            attr { key: 'N' value { i: 3 } }
          }
        }
      }
    })pb");
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          RunGraph(graph, {"parts:0", "parts:1", "parts:2"}));
  EXPECT_THAT(out[0], TensorIs<float>({}, {1}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {4}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {7}));
}

// A resource variable v = 3, and SetV(h, value) assigning it as a control
// output (TF 2's automatic control dependencies).
std::string VariableAndSetter(const std::string& more_functions = "") {
  return absl::StrCat("library {", more_functions, R"pb(
      function {
        signature {
          name: 'SetV'
          input_arg { name: 'h' type: DT_RESOURCE }
          input_arg { name: 'value' type: DT_INT32 }
          control_output: 'assign'
        }
        node_def {
          name: 'assign'
          op: 'AssignVariableOp'
          input: 'h'
          input: 'value'
          attr { key: 'dtype' value { type: DT_INT32 } }
        }
        control_ret { key: 'assign' value: 'assign' }
      }
    }
                              node {
      name: 'v'
      op: 'VarHandleOp'
      attr { key: 'dtype' value { type: DT_INT32 } }
      attr { key: 'shape' value { shape {} } }
      attr { key: 'shared_name' value { s: 'v' } }
    }
    node { )pb",
                      IntConst("three", 3), R"pb(}
                                                 node {
      name: 'init'
      op: 'AssignVariableOp'
      input: 'v'
      input: 'three'
      attr { key: 'dtype' value { type: DT_INT32 } }
    }
    node {
      name: 'read'
      op: 'ReadVariableOp'
      input: 'v'
      attr { key: 'dtype' value { type: DT_INT32 } }
    })pb");
}

TEST(FunctionTest, ControlOutputsRunWhenTheCallRuns) {
  const std::string graph = absl::StrCat(VariableAndSetter(), "node { ", IntConst("nine", 9),
                                         R"pb(}
                                              node {
      name: 'set'
      op: 'StatefulPartitionedCall'
      input: 'v'
      input: 'nine'
      attr { key: 'Tin' value { list { type: DT_RESOURCE type: DT_INT32 } } }
      attr { key: 'Tout' value { list {} } }
      attr { key: 'f' value { func { name: 'SetV' } } }
    })pb");
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(graph));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({}, {}, {"init"}, nullptr));
  TW_ASSERT_OK(session->Run({}, {"read"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {3}));
  TW_ASSERT_OK(session->Run({}, {}, {"set"}, nullptr));
  TW_ASSERT_OK(session->Run({}, {"read"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {9}));
}

std::string IfGraph(const std::string& op, const std::string& tcond) {
  return absl::StrCat("library {", kBranches, R"pb(}
                                                   node {
      name: 'pred'
      op: 'Placeholder'
      attr { key: 'dtype' value { type: )pb",
                      tcond, R"pb(}
                                  }
      attr { key: 'shape' value { shape {} } }
    }
    node { )pb",
                      IntConst("x", 10), R"pb(}
                                              node {
      name: 'if'
      op: ')pb",
                      op, R"pb(' input: 'pred'
                               input: 'x'
                               attr { key: 'Tcond'
                                      value { type:)pb",
                      tcond, R"pb(}
                                  }
      attr { key: 'Tin' value { list { type: DT_INT32 } } }
      attr { key: 'Tout' value { list { type: DT_INT32 } } }
      attr { key: 'then_branch' value { func { name: 'PlusOne' } } }
      attr { key: 'else_branch' value { func { name: 'TimesTwo' } } }
    })pb");
}

TEST(FunctionTest, IfTakesTheBranchThePredicateNames) {
  for (const char* op : {"If", "StatelessIf"}) {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(IfGraph(op, "DT_BOOL")));
    std::vector<Tensor> out;
    TW_ASSERT_OK(session->Run({{"pred", Scalar<bool>(true)}}, {"if"}, {}, &out));
    EXPECT_THAT(out[0], TensorIs<int32_t>({}, {11})) << op;
    TW_ASSERT_OK(session->Run({{"pred", Scalar<bool>(false)}}, {"if"}, {}, &out));
    EXPECT_THAT(out[0], TensorIs<int32_t>({}, {20})) << op;
  }
}

TEST(FunctionTest, IfConvertsANumberOrStringPredicateAsTensorFlowDoes) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> ints,
                          MakeSession(IfGraph("StatelessIf", "DT_INT32")));
  std::vector<Tensor> out;
  TW_ASSERT_OK(ints->Run({{"pred", Scalar<int32_t>(-3)}}, {"if"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {11}));
  TW_ASSERT_OK(ints->Run({{"pred", Scalar<int32_t>(0)}}, {"if"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {20}));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> strings,
                          MakeSession(IfGraph("StatelessIf", "DT_STRING")));
  TW_ASSERT_OK(strings->Run({{"pred", Scalar<std::string>("yes")}}, {"if"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {11}));
  TW_ASSERT_OK(strings->Run({{"pred", Scalar<std::string>("")}}, {"if"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {20}));
}

// Case(index, x) over PlusOne and TimesTwo, x = 10.
std::string CaseGraph(const std::string& op) {
  return absl::StrCat("library {", kBranches, R"pb(}
                                                   node {
      name: 'index'
      op: 'Placeholder'
      attr { key: 'dtype' value { type: DT_INT32 } }
      attr { key: 'shape' value { shape {} } }
    }
    node { )pb",
                      IntConst("x", 10), R"pb(}
                                              node {
      name: 'case'
      op: ')pb",
                      op, R"pb(' input: 'index'
                               input: 'x'
                               attr { key: 'Tin' value { list { type: DT_INT32 } } }
                               attr { key: 'Tout' value { list { type: DT_INT32 } } }
                               attr { key: 'branches'
                                      value { list { func { name: 'PlusOne' }
                                                     func { name: 'TimesTwo' } } } }
    })pb");
}

TEST(FunctionTest, CaseRunsTheIndexedBranchAndTheLastWhenOutOfRange) {
  for (const char* op : {"Case", "StatelessCase"}) {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(CaseGraph(op)));
    // TF's Case: an index outside [0, N) runs the last branch.
    for (const auto& [index, expected] :
         std::vector<std::pair<int32_t, int32_t>>{{0, 11}, {1, 20}, {2, 20}, {-1, 20}}) {
      std::vector<Tensor> out;
      TW_ASSERT_OK(session->Run({{"index", Scalar<int32_t>(index)}}, {"case"}, {}, &out));
      EXPECT_THAT(out[0], TensorIs<int32_t>({}, {expected})) << op << " index " << index;
    }
  }
}

TEST(FunctionTest, OnlyTheTakenBranchsSideEffectsRun) {
  // if pred: SetV(v, 9) else: nothing; the If has no results.
  const std::string graph =
      absl::StrCat(VariableAndSetter(absl::StrCat(R"pb(
                                                    function {
                                                      signature {
                                                        name: 'Nothing'
                                                        input_arg { name: 'h' type: DT_RESOURCE }
                                                      }
                                                    }
                                                    function { signature {
                                                      name: 'SetNine'
                                                      input_arg { name: 'h' type: DT_RESOURCE }
                                                      control_output: 'set'
                                                    }
                                                               node_def {)pb",
                                                  IntConst("nine", 9), R"pb(}
                                                                            node_def {
          name: 'set'
          op: 'SetV'
          input: 'h'
          input: 'nine:output:0'
        }
        control_ret { key: 'set' value: 'set' }
      })pb")),
                   R"pb(
                     node {
                       name: 'pred'
                       op: 'Placeholder'
                       attr {
                         key: 'dtype'
                         value { type: DT_BOOL }
                       }
                       attr {
                         key: 'shape'
                         value { shape {} }
                       }
                     }
                     node {
                       name: 'if'
                       op: 'If'
                       input: 'pred'
                       input: 'v'
                       attr {
                         key: 'Tcond'
                         value { type: DT_BOOL }
                       }
                       attr {
                         key: 'Tin'
                         value { list { type: DT_RESOURCE } }
                       }
                       attr {
                         key: 'Tout'
                         value { list {} }
                       }
                       attr {
                         key: 'then_branch'
                         value { func { name: 'SetNine' } }
                       }
                       attr {
                         key: 'else_branch'
                         value { func { name: 'Nothing' } }
                       }
                     })pb");
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(graph));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({}, {}, {"init"}, nullptr));
  TW_ASSERT_OK(session->Run({{"pred", Scalar<bool>(false)}}, {}, {"if"}, nullptr));
  TW_ASSERT_OK(session->Run({}, {"read"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {3}));
  TW_ASSERT_OK(session->Run({{"pred", Scalar<bool>(true)}}, {}, {"if"}, nullptr));
  TW_ASSERT_OK(session->Run({}, {"read"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {9}));
}

// while i < 11: (i, s) = (i + 1, s + step(i)), from (1, 0); `step` is the
// body's value added to s, "i" for i itself.
std::string SumLoop(const std::string& op, int parallel_iterations,
                    const std::string& extra_functions = "", const std::string& extra_body = "",
                    const std::string& step = "i") {
  return absl::StrCat(
      "library {", extra_functions, R"pb(
        function { signature {
          name: 'Below11'
          input_arg { name: 'i' type: DT_INT32 }
          input_arg { name: 's' type: DT_INT32 }
          output_arg { name: 'more' type: DT_BOOL }
        }
                   node_def {)pb",
      IntConst("limit", 11),
      R"pb(}
           node_def { name: 'less' op: 'Less' input: 'i' input: 'limit:output:0' )pb",
      kIntT, R"pb(}
                  ret { key: 'more' value: 'less:z:0' }
      }
      function {
        signature {
          name: 'Step'
          input_arg { name: 'i' type: DT_INT32 }
          input_arg { name: 's' type: DT_INT32 }
          output_arg { name: 'next_i' type: DT_INT32 }
          output_arg { name: 'next_s' type: DT_INT32 }
        }
        node_def { )pb",
      IntConst("one", 1),
      R"pb(}
           node_def { name: 'inc' op: 'AddV2' input: 'i' input: 'one:output:0' )pb",
      kIntT, R"pb(}
      )pb",
      extra_body, R"pb(
        node_def { name: 'add' op: 'AddV2' input: 's' input: ')pb",
      step, "' ", kIntT, R"pb(}
                              ret { key: 'next_i' value: 'inc:z:0' }
        ret { key: 'next_s' value: 'add:z:0' }
      }
    }
    node { )pb",
      IntConst("i0", 1), R"pb(}
                              node { )pb",
      IntConst("s0", 0), R"pb(}
                              node {
      name: 'loop'
      op: ')pb",
      op, R"pb(' input: 'i0'
               input: 's0'
               attr {
                 key: 'T'
                 value { list { type: DT_INT32 type: DT_INT32 } }
               }
               attr {
                 key: 'cond'
                 value { func { name: 'Below11' } }
               }
               attr {
                 key: 'body'
                 value { func { name: 'Step' } }
               }
               attr { key: 'parallel_iterations'
                      value { i:)pb",
      parallel_iterations, R"pb(}
                                }
    })pb");
}

TEST(FunctionTest, WhileSumsOneToTen) {
  for (const char* op : {"While", "StatelessWhile"}) {
    for (int parallel : {1, 10}) {
      TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                              RunGraph(SumLoop(op, parallel), {"loop:0", "loop:1"}));
      EXPECT_THAT(out[0], TensorIs<int32_t>({}, {11})) << op << " " << parallel;
      EXPECT_THAT(out[1], TensorIs<int32_t>({}, {55})) << op << " " << parallel;
    }
  }
}

TEST(FunctionTest, WhileBodyWithAnIfInside) {
  // s += i > 5 ? 2 i : i + 1 for i = 1..10: (2 + ... + 6) + 2 (6 + ... + 10) = 20 + 80.
  const std::string body = absl::StrCat(
      "node_def { ", IntConst("five", 5), " } ",
      "node_def { name: 'big' op: 'Greater' input: 'i' input: 'five:output:0' ", kIntT, " } ",
      R"pb(
        node_def {
          name: 'pick'
          op: 'StatelessIf'
          input: 'big:z:0'
          input: 'i'
          attr {
            key: 'Tcond'
            value { type: DT_BOOL }
          }
          attr {
            key: 'Tin'
            value { list { type: DT_INT32 } }
          }
          attr {
            key: 'Tout'
            value { list { type: DT_INT32 } }
          }
          attr {
            key: 'then_branch'
            value { func { name: 'TimesTwo' } }
          }
          attr {
            key: 'else_branch'
            value { func { name: 'PlusOne' } }
          }
        })pb");
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      RunGraph(SumLoop("While", 10, kBranches, body, "pick:output:0"), {"loop:1"}));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {100}));
}

TEST(FunctionTest, WhileConditionReturningANumberCountsDown) {
  // while n: (n, count) = (n - 1, count + 1), from (4, 0).
  const std::string graph = absl::StrCat(
      R"pb(
        library { function {
          signature {
            name: 'NonZero'
            input_arg { name: 'n' type: DT_INT32 }
            input_arg { name: 'count' type: DT_INT32 }
            output_arg { name: 'n_out' type: DT_INT32 }
          }
          ret { key: 'n_out' value: 'n' }
        }
                  function { signature {
                    name: 'CountDown'
                    input_arg { name: 'n' type: DT_INT32 }
                    input_arg { name: 'count' type: DT_INT32 }
                    output_arg { name: 'next_n' type: DT_INT32 }
                    output_arg { name: 'next_count' type: DT_INT32 }
                  }
                             node_def {)pb",
      IntConst("one", 1),
      R"pb(}
           node_def { name: 'dec' op: 'Sub' input: 'n' input: 'one:output:0' )pb",
      kIntT, R"pb(}
                  node_def { name: 'inc' op: 'AddV2' input: 'count' input: 'one:output:0' )pb",
      kIntT, R"pb(}
                  ret { key: 'next_n' value: 'dec:z:0' }
        ret { key: 'next_count' value: 'inc:z:0' }
      }
    }
    node { )pb",
      IntConst("n0", 4), R"pb(}
                              node { )pb",
      IntConst("c0", 0), R"pb(}
                              node {
      name: 'loop'
      op: 'StatelessWhile'
      input: 'n0'
      input: 'c0'
      attr { key: 'T' value { list { type: DT_INT32 type: DT_INT32 } } }
      attr { key: 'cond' value { func { name: 'NonZero' } } }
      attr { key: 'body' value { func { name: 'CountDown' } } }
    })pb");
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunGraph(graph, {"loop:0", "loop:1"}));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {0}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({}, {4}));
}

TEST(FunctionTest, ExtendCallsAFunctionOfTheGraphCreatedBefore) {
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(kSeven));
  GraphDef more;
  TW_ASSERT_OK(ParseTextProto("node { name: 'again' op: 'Seven' }", &more));
  TW_ASSERT_OK(session->Extend(more));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({}, {"again"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<uint8_t>({}, {7}));
}

TEST(FunctionTest, BadCallsAreClearErrorsNamingTheNode) {
  EXPECT_THAT(RunGraph(CallSeven("DT_FLOAT"), {"call:0"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Node 'call' (op PartitionedCall): the call's result types (Tout) are "
                       "float but function 'Seven' has uint8"));
  EXPECT_THAT(RunGraph(R"pb(
                         node {
                           name: 'call'
                           op: 'PartitionedCall'
                           attr {
                             key: 'Tin'
                             value { list {} }
                           }
                           attr {
                             key: 'Tout'
                             value { list {} }
                           }
                           attr {
                             key: 'f'
                             value { func { name: 'Nope' } }
                           }
                         })pb",
                       {}, {}, {"call"}),
              StatusIs(absl::StatusCode::kNotFound,
                       "Function 'Nope' is not in the graph's function library"));
  // A body input that names nothing, and a placeholder the call leaves unset.
  const auto broken = [](const std::string& attr) {
    return absl::StrCat(R"pb(
                          library { function { signature {
                                      name: 'Broken'
                                      output_arg { name: 'y' type: DT_FLOAT }
                                    }
                                               node_def { name: 'id' op: 'Identity' input: 'nope'
                                                          attr { key: 'T' value {)pb",
                        attr, R"pb(}
                                   }
                              }
                              ret { key: 'y' value: 'id:output:0' }
                            }
                          }
                          node { name: 'b' op: 'Broken' })pb");
  };
  EXPECT_THAT(RunGraph(broken("type: DT_FLOAT"), {"b"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Node 'b' (op Broken): Function 'Broken': node 'id': input 'nope' names "
                       "no argument or node output of the function"));
  EXPECT_THAT(RunGraph(broken("placeholder: 'T'"), {"b"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Function 'Broken': node 'id': attr placeholder $T is not set by the call"));
  // Recursion through a func attr.
  EXPECT_THAT(RunGraph(R"pb(
                         library {
                           function {
                             signature { name: 'Again' }
                             node_def {
                               name: 'again'
                               op: 'PartitionedCall'
                               attr {
                                 key: 'Tin'
                                 value { list {} }
                               }
                               attr {
                                 key: 'Tout'
                                 value { list {} }
                               }
                               attr {
                                 key: 'f'
                                 value { func { name: 'Again' } }
                               }
                             }
                           }
                         }
                         node { name: 'a' op: 'Again' })pb",
                       {}, {}, {"a"}),
              StatusIs(absl::StatusCode::kInvalidArgument, "is recursive: Again -> Again"));
}

}  // namespace
}  // namespace towerflow
