// The bad-input tables of the TensorList ops, of the SparseTensor ops (each
// a valid SparseTensor [3, 4] of three entries), of the record decoders,
// text ops and staging areas of input pipelines, of QuantizeV2/Dequantize
// and of the optimizer updates of more_training_ops.cc, of the samplers and
// fractional pooling, and of tf.math.special's functions on our own series
// (kernels/testing/bad_inputs_cases.h).
#include <map>
#include <string>
#include <vector>

#include "framework/tensor_list.h"
#include "framework/variant.h"
#include "kernels/testing/bad_inputs_cases.h"

namespace towerflow {
namespace bad_inputs {
namespace {

Tensor I64(std::initializer_list<int64_t> dims, std::vector<int64_t> v) {
  return Literal<int64_t>(TensorShape(dims), v);
}
Tensor Indices() { return I64({3, 2}, {0, 1, 1, 0, 2, 3}); }
Tensor Shape() { return I64({2}, {3, 4}); }

// A sampler's attrs (two true classes a row, three sampled) and its own.
std::map<std::string, AttrValue> Sampler(bool unique, std::map<std::string, AttrValue> own) {
  own.insert({{"num_true", A(int64_t{2})},
              {"num_sampled", A(int64_t{3})},
              {"unique", A(unique)},
              {"seed", A(int64_t{1})}});
  return own;
}
Tensor Classes() { return I64({2, 2}, {0, 1, 2, 1}); }

// A serialized SequenceExample {context c: [1]; feature lists f: [[1, 2]],
// r: [[3]]} and the attrs of a SequenceExample parser taking c as an int64
// scalar, f as float [2] steps and r as int64 sparse steps, with `own`.
std::string SequenceBytes() {
  return std::string(
      "\x0a\x0c\x0a\x0a\x0a\x01\x63\x12\x05\x1a\x03\x0a\x01\x01\x12\x23\x0a\x0c\x0a\x01\x72"
      "\x12\x07\x0a\x05\x1a\x03\x0a\x01\x03\x0a\x13\x0a\x01\x66\x12\x0e\x0a\x0c\x12\x0a"
      "\x0a\x08\x00\x00\x80\x3f\x00\x00\x00\x40",
      51);
}
std::map<std::string, AttrValue> SequenceAttrs(std::map<std::string, AttrValue> own) {
  own.insert(
      {{"Ncontext_sparse", A(int64_t{0})},
       {"Tcontext_dense", A(std::vector<DataType>{DT_INT64})},
       {"context_sparse_types", A(std::vector<DataType>{})},
       {"context_dense_shapes", A(std::vector<PartialTensorShape>{PartialTensorShape({})})},
       {"Nfeature_list_sparse", A(int64_t{1})},
       {"Nfeature_list_dense", A(int64_t{1})},
       {"feature_list_dense_types", A(std::vector<DataType>{DT_FLOAT})},
       {"feature_list_sparse_types", A(std::vector<DataType>{DT_INT64})},
       {"feature_list_dense_shapes", A(std::vector<PartialTensorShape>{PartialTensorShape({2})})}});
  return own;
}

}  // namespace

std::vector<Case> SparseCases() {
  return {
      {"SparseReorder", {}, {I64({3, 2}, {2, 3, 0, 1, 1, 0}), F({3}), Shape()}},
      {"SparseBincount",
       {{"binary_output", A(false)}},
       {Indices(), Literal<int32_t>({3}, {1, 3, 1}), Shape(), Scalar<int32_t>(5), F({3})}},
      {"RaggedBincount",
       {},
       {I64({4}, {0, 2, 2, 3}), Literal<int32_t>({3}, {1, 3, 1}), Scalar<int32_t>(5), F({3})}},
      {"DenseCountSparseOutput",
       {{"binary_output", A(false)}, {"maxlength", A(int64_t{6})}},
       {Literal<int32_t>({2, 3}, {3, 1, 3, 7, 7, 0}), F({2, 3})}},
      {"SparseCountSparseOutput",
       {{"binary_output", A(false)}},
       {Indices(), Literal<int32_t>({3}, {1, 3, 1}), Shape(), F({3})}},
      {"RaggedCountSparseOutput",
       {{"binary_output", A(true)}, {"minlength", A(int64_t{4})}},
       {I64({4}, {0, 2, 2, 3}), Literal<int32_t>({3}, {1, 3, 1}), F({3})}},
      {"RaggedTensorToSparse",
       {{"RAGGED_RANK", A(int64_t{2})}},
       {I64({3}, {0, 2, 3}), I64({4}, {0, 1, 4, 4}), F({4, 2})}},
      {"RaggedGather",
       {{"PARAMS_RAGGED_RANK", A(int64_t{2})}, {"OUTPUT_RAGGED_RANK", A(int64_t{3})}},
       {I64({3}, {0, 2, 3}), I64({4}, {0, 1, 4, 4}), F({4, 2}),
        Literal<int32_t>({2, 2}, {1, 0, 0, 0})}},
      {"RaggedGather",
       {{"PARAMS_RAGGED_RANK", A(int64_t{1})}, {"OUTPUT_RAGGED_RANK", A(int64_t{0})}},
       {I64({4}, {0, 2, 2, 5}), F({5}), Scalar<int64_t>(2)}},
      {"SparseSlice", {}, {Indices(), F({3}), Shape(), I64({2}, {1, 0}), I64({2}, {2, 3})}},
      {"SparseSliceGrad", {}, {F({1}), Indices(), I64({2}, {1, 0}), I64({1, 2}, {0, 0})}},
      {"SparseConcat",
       {{"concat_dim", A(int64_t{1})}, {"N", A(int64_t{2})}, {"T", A(DT_FLOAT)}},
       {Indices(), I64({1, 2}, {0, 0}), F({3}), F({1}), Shape(), I64({2}, {3, 2})}},
      {"SparseSplit",
       {{"num_split", A(int64_t{2})}},
       {Literal<int64_t>({}, {1}), Indices(), F({3}), Shape()}},
      {"SparseSoftmax", {}, {Indices(), F({3}), Shape()}},
      {"SparseAdd",
       {},
       {Indices(), F({3}), Shape(), I64({2, 2}, {1, 0, 2, 2}), F({2}), Shape(),
        Scalar<float>(0.1f)}},
      {"SparseAddGrad",
       {},
       {F({4}), Indices(), I64({2, 2}, {1, 0, 2, 2}), I64({4, 2}, {0, 1, 1, 0, 2, 2, 2, 3})}},
      {"SparseSparseMaximum",
       {},
       {Indices(), F({3}), Shape(), I64({2, 2}, {1, 0, 2, 2}), F({2}), Shape()}},
      {"SparseSparseMinimum",
       {},
       {Indices(), F({3}), Shape(), I64({2, 2}, {1, 0, 2, 2}), F({2}), Shape()}},
      {"SparseDenseCwiseAdd", {}, {Indices(), F({3}), Shape(), F({3, 4})}},
      {"SparseDenseCwiseMul", {}, {Indices(), F({3}), Shape(), F({4})}},
      {"SparseDenseCwiseDiv",
       {},
       {Indices(), Literal<int32_t>({3}, {1, 2, 3}), Shape(), Literal<int32_t>({3, 1}, {2, 3, 4})}},
      {"SparseReduceSumSparse", {{"keep_dims", A(true)}}, {Indices(), F({3}), Shape(), I32({1})}},
      {"SparseReduceMaxSparse", {}, {Indices(), F({3}), Shape(), I32({0})}},
      {"SparseMatMul",
       {{"transpose_b", A(true)}, {"a_is_sparse", A(true)}},
       {F({2, 3}), F({4, 3})}},
      {"SparseReorder", {}, {Indices(), Literal<std::string>({3}, {"a", "b", "c"}), Shape()}},
      {"EditDistance",
       {{"normalize", A(true)}},
       {Indices(), F({3}), Shape(), I64({2, 2}, {0, 1, 2, 0}), F({2}), I64({2}, {4, 2})}},
      {"SetSize", {}, {Indices(), I64({3}, {5, 5, 6}), Shape()}},
      {"SetSize", {{"validate_indices", A(false)}}, {Indices(), I32({4, 4, 1}), Shape()}},
      {"DenseToDenseSetOperation",
       {{"set_operation", A("a-b")}},
       {Literal<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}),
        Literal<int32_t>({3, 2}, {1, 1, 2, 3, 5, 8})}},
      {"DenseToSparseSetOperation",
       {{"set_operation", A("union")}},
       {Literal<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}), Indices(), I32({2, 4, 7}), Shape()}},
      {"SparseToSparseSetOperation",
       {{"set_operation", A("intersection")}, {"validate_indices", A(false)}},
       {Indices(), Literal<std::string>({3}, {"a", "b", "c"}), Shape(), I64({2, 2}, {1, 0, 2, 2}),
        Literal<std::string>({2}, {"b", "c"}), Shape()}},
      {"SparseCross",
       {{"N", A(int64_t{1})},
        {"sparse_types", A(DataTypeVector{DT_STRING})},
        {"dense_types", A(DataTypeVector{DT_INT64})},
        {"hashed_output", A(true)},
        {"num_buckets", A(int64_t{100})},
        {"hash_key", A(int64_t{7})},
        {"out_type", A(DT_INT64)},
        {"internal_type", A(DT_INT64)}},
       {Indices(), Literal<std::string>({3}, {"a", "b", "c"}), Shape(),
        I64({3, 2}, {1, 2, 3, 4, 5, 6})}},
      {"SparseCrossV2",
       {{"N", A(int64_t{1})},
        {"sparse_types", A(DataTypeVector{DT_INT64})},
        {"dense_types", A(DataTypeVector{DT_STRING})}},
       {Indices(), I64({3}, {4, 5, 6}), Shape(), Literal<std::string>({3, 1}, {"x", "y", "z"}),
        Literal<std::string>({}, {"-"})}},
      {"SparseCrossHashed",
       {{"N", A(int64_t{1})},
        {"sparse_types", A(DataTypeVector{DT_INT64})},
        {"dense_types", A(DataTypeVector{DT_INT64})}},
       {Indices(), I64({3}, {4, 5, 6}), Shape(), I64({3, 1}, {1, 2, 3}), Literal<int64_t>({}, {10}),
        Literal<bool>({}, {true}), I64({2}, {1, 2})}},
  };
}

std::vector<Case> InputPipelineCases() {
  const auto strings = [](std::vector<std::string> v) {
    return Literal<std::string>({static_cast<int64_t>(v.size())}, v);
  };
  return {
      // TF 1's queues, made from their attrs (capacity, min_after_dequeue
      // and the shapes mutated); their enqueues and dequeues take a queue's
      // handle, tested in queue_ops_test.
      {"RandomShuffleQueueV2",
       {{"component_types", A(DataTypeVector{DT_FLOAT})},
        {"shapes", A(std::vector<PartialTensorShape>{PartialTensorShape({2})})},
        {"capacity", A(int64_t{4})},
        {"min_after_dequeue", A(int64_t{1})},
        {"seed", A(int64_t{3})}},
       {}},
      {"PaddingFIFOQueueV2",
       {{"component_types", A(DataTypeVector{DT_INT32})},
        {"shapes", A(std::vector<PartialTensorShape>{PartialTensorShape({-1, 3})})},
        {"capacity", A(int64_t{2})}},
       {}},
      {"PriorityQueueV2",
       {{"component_types", A(DataTypeVector{DT_STRING})},
        {"shapes", A(std::vector<PartialTensorShape>{PartialTensorShape({})})}},
       {}},
      // Staging areas: stages, which never wait on an unbounded area (a
      // take would wait for an element, tested in stage_ops_test), and
      // sizes.
      {"Stage", {{"dtypes", A(DataTypeVector{DT_FLOAT})}}, {F({2, 3})}},
      {"MapStage",
       {{"dtypes", A(DataTypeVector{DT_FLOAT, DT_FLOAT})},
        {"fake_dtypes", A(DataTypeVector{DT_FLOAT})}},
       {I64({}, {1}), Literal<int32_t>({1}, {1}), F({2})}},
      {"OrderedMapStage",
       {{"dtypes", A(DataTypeVector{DT_FLOAT})}, {"fake_dtypes", A(DataTypeVector{DT_FLOAT})}},
       {I64({}, {2}), Literal<int32_t>({1}, {0}), F({3})}},
      {"StageSize", {{"dtypes", A(DataTypeVector{DT_FLOAT})}}, {}},
      // A summary writer's handle; its writes need the writer, tested in
      // summary_writer_test (and the file writes are left out, as below).
      {"SummaryWriter", {}, {}},
      {"MapIncompleteSize", {{"dtypes", A(DataTypeVector{DT_FLOAT})}}, {}},
      // TF 1's readers, made from their attrs (the byte counts mutated);
      // their reads take a queue's handle, tested in reader_ops_test.
      {"FixedLengthRecordReaderV2",
       {{"header_bytes", A(int64_t{1})},
        {"record_bytes", A(int64_t{4})},
        {"footer_bytes", A(int64_t{1})},
        {"hop_bytes", A(int64_t{2})}},
       {}},
      {"TextLineReaderV2", {{"skip_header_lines", A(int64_t{1})}}, {}},
      {"TFRecordReaderV2", {}, {}},
      {"WholeFileReaderV2", {}, {}},
      {"IdentityReaderV2", {}, {}},
      // Reads and writes are left out: a mutated file name would touch
      // whatever it names. A pattern only lists.
      {"MatchingFiles", {}, {strings({"/nonexistent-towerflow-dir/*.txt", ""})}},
      {"SerializeTensor", {}, {F({2, 3})}},
      // An empty example: sparse b has no values, dense a its default.
      {"ParseSingleExample",
       {{"num_sparse", A(int64_t{1})},
        {"sparse_keys", A(std::vector<std::string>{"b"})},
        {"dense_keys", A(std::vector<std::string>{"a"})},
        {"sparse_types", A(std::vector<DataType>{DT_INT64})},
        {"Tdense", A(std::vector<DataType>{DT_FLOAT})},
        {"dense_shapes", A(std::vector<PartialTensorShape>{PartialTensorShape({2})})}},
       {Literal<std::string>({}, {""}), F({2})}},
      // zlib.compress(b"hello world").
      {"DecodeCompressed",
       {{"compression_type", A("ZLIB")}},
       {strings({std::string("\x78\x9c\xcb\x48\xcd\xc9\xc9\x57\x28\xcf\x2f\xca\x49\x01"
                             "\x00\x1a\x0b\x04\x5d",
                             19)})}},
      {"DecodeJSONExample",
       {},
       {strings({R"({"features": {"feature": {"a": {"int64List": {"value": ["1"]}}}}})"})}},
      // {context c: [1]; lists f: [1, 2], r: [3]}: c dense, f dense [2], r
      // sparse (and ragged in V2).
      {"ParseSequenceExampleV2",
       SequenceAttrs({{"context_ragged_value_types", A(std::vector<DataType>{})},
                      {"context_ragged_split_types", A(std::vector<DataType>{})},
                      {"feature_list_ragged_value_types", A(std::vector<DataType>{DT_INT64})},
                      {"feature_list_ragged_split_types", A(std::vector<DataType>{DT_INT32})}}),
       {strings({SequenceBytes()}), strings({"n"}), strings({}), strings({"c"}), strings({}),
        strings({"r"}), strings({"f"}), strings({"r"}), Literal<bool>({1}, {false}),
        Literal<int64_t>({}, {0})}},
      {"ParseSingleSequenceExample",
       SequenceAttrs({{"Ncontext_dense", A(int64_t{1})}}),
       {Literal<std::string>({}, {SequenceBytes()}), strings({}), Literal<std::string>({}, {"c"}),
        Literal<std::string>({}, {"r"}), Literal<std::string>({}, {"f"}), Literal<int64_t>({}, {0}),
        Literal<std::string>({}, {"n"})}},
      {"ParseSequenceExample",
       SequenceAttrs({{"Ncontext_dense", A(int64_t{1})},
                      {"context_sparse_keys", A(std::vector<std::string>{})},
                      {"context_dense_keys", A(std::vector<std::string>{"c"})},
                      {"feature_list_sparse_keys", A(std::vector<std::string>{"r"})},
                      {"feature_list_dense_keys", A(std::vector<std::string>{"f"})},
                      {"feature_list_dense_missing_assumed_empty", A(std::vector<std::string>{})}}),
       {strings({SequenceBytes()}), strings({}), Literal<int64_t>({}, {0})}},
      {"ParseTensor",
       {{"out_type", A(DT_FLOAT)}},
       {Literal<std::string>({}, {std::string("\x08\x01\x12\x04\x12\x02\x08\x02\x22\x08"
                                              "\x00\x00\xc0\x3f\x00\x00\x00\x40",
                                              18)})}},
      {"TensorSummaryV2",
       {},
       {Literal<std::string>({}, {"t"}), F({2}), Literal<std::string>({}, {"\x12\x04text"})}},
      {"StringNGrams",
       {{"separator", A(" ")},
        {"ngram_widths", Ints({2, 3})},
        {"left_pad", A("<")},
        {"right_pad", A(">")},
        {"pad_width", A(int64_t{1})},
        {"preserve_short_sequences", A(true)}},
       {Literal<std::string>({4}, {"a", "b", "c", "d"}), Literal<int64_t>({3}, {0, 1, 4})}},
      {"Fingerprint", {}, {strings({"a", "b", "c", "d"}), Str("farmhash64")}},
      {"Fingerprint", {}, {F({2, 3}), Str("farmhash64")}},
      {"DecodeRaw", {{"out_type", A(DT_FLOAT)}}, {strings({"abcdefgh", "12345678"})}},
      {"DecodeRaw",
       {{"out_type", A(DT_COMPLEX64)}, {"little_endian", A(false)}},
       {strings({"abcdefgh"})}},
      {"DecodePaddedRaw",
       {{"out_type", A(DT_INT16)}},
       {strings({"abc", "abcdefgh"}), Scalar<int32_t>(4)}},
      {"DecodeCSV",
       {{"OUT_TYPE", A(DataTypeVector{DT_FLOAT, DT_INT32, DT_STRING, DT_INT64})},
        {"select_cols", Ints({0, 1, 3, 4})}},
       {strings({"1.5,2,x,\"y\",4", ",,,,"}), Literal<float>({1}, {0.5f}),
        Literal<int32_t>({1}, {7}), Literal<std::string>({1}, {"d"}), Literal<int64_t>({1}, {9})}},
  };
}

std::vector<Case> QuantizationCases() {
  Tensor bytes(DT_QUINT8, {2, 3});
  for (int i = 0; i < 6; ++i) static_cast<uint8_t*>(bytes.raw_data())[i] = uint8_t(40 * i);
  return {
      {"QuantizeV2", {{"T", A(DT_QINT8)}}, {F({2, 3}), Scalar<float>(-1), Scalar<float>(1)}},
      {"QuantizeV2",
       {{"T", A(DT_QUINT8)}, {"mode", A("SCALED")}, {"axis", A(int64_t{1})}},
       {F({2, 3}), Literal<float>({3}, {-1, 0, -2}), Literal<float>({3}, {1, 2, 1})}},
      {"QuantizeAndDequantizeV4",
       {{"axis", A(int64_t{1})}},
       {F({2, 3}), Literal<float>({3}, {-1, 0, -2}), Literal<float>({3}, {1, 2, 1})}},
      {"Dequantize", {{"mode", A("MIN_FIRST")}}, {bytes, Scalar<float>(-1), Scalar<float>(1)}},
      {"Dequantize",
       {{"axis", A(int64_t{1})}, {"dtype", A(DT_BFLOAT16)}},
       {bytes, Literal<float>({3}, {-1, 0, -2}), Literal<float>({3}, {1, 2, 1})}},
  };
}

// TF 1's eight-bit inference ops, each input with its scalar range.
std::vector<Case> QuantizedInferenceCases() {
  const auto quantized = [](DataType dtype, const TensorShape& shape) {
    Tensor t(dtype, shape);
    const int64_t bytes = t.NumElements() * DataTypeSize(dtype);
    for (int64_t i = 0; i < bytes; ++i) static_cast<uint8_t*>(t.raw_data())[i] = uint8_t(37 * i);
    return t;
  };
  const auto s = [](float v) { return Scalar<float>(v); };
  const Tensor image = quantized(DT_QUINT8, {1, 4, 4, 2});
  const Tensor matrix = quantized(DT_QUINT8, {2, 3});
  const Tensor wide = quantized(DT_QINT32, {2, 3});
  const auto window = [](const char* padding) {
    return std::map<std::string, AttrValue>{
        {"ksize", Ints({1, 2, 2, 1})}, {"strides", Ints({1, 2, 2, 1})}, {"padding", A(padding)}};
  };
  return {
      {"QuantizedConv2D",
       {{"strides", Ints({1, 1, 1, 1})}, {"padding", A("SAME")}},
       {image, quantized(DT_QUINT8, {2, 2, 2, 3}), s(-1), s(2), s(-0.5f), s(1.5f)}},
      {"QuantizedMatMul",
       {{"transpose_b", A(true)}},
       {matrix, matrix, s(-1), s(2), s(-0.5f), s(1.5f)}},
      {"QuantizedBiasAdd",
       {{"out_type", A(DT_QINT32)}},
       {quantized(DT_QINT8, {2, 3}), quantized(DT_QINT8, {3}), s(-1), s(2), s(-0.5f), s(0.25f)}},
      {"QuantizedAdd", {}, {matrix, quantized(DT_QUINT8, {3}), s(-1), s(2), s(-0.5f), s(0.25f)}},
      {"QuantizedMul", {}, {matrix, quantized(DT_QUINT8, {}), s(-1), s(2), s(-0.5f), s(0.25f)}},
      {"QuantizedBatchNormWithGlobalNormalization",
       {{"out_type", A(DT_QINT32)},
        {"variance_epsilon", A(0.001f)},
        {"scale_after_normalization", A(true)}},
       {image, s(-1), s(2), quantized(DT_QUINT8, {2}), s(-0.5f), s(1), quantized(DT_QUINT8, {2}),
        s(0), s(3), quantized(DT_QUINT8, {2}), s(-1), s(1), quantized(DT_QUINT8, {2}), s(0), s(2)}},
      {"QuantizedResizeBilinear",
       {{"align_corners", A(true)}},
       {image, Literal<int32_t>({2}, {7, 5}), s(-1), s(2)}},
      {"QuantizedResizeBilinear",
       {{"half_pixel_centers", A(true)}},
       {quantized(DT_QINT32, {1, 4, 4, 2}), Literal<int32_t>({2}, {3, 6}), s(-1), s(2)}},
      {"QuantizedRelu", {{"out_type", A(DT_QUINT8)}}, {matrix, s(-1), s(1)}},
      {"QuantizedRelu6", {{"out_type", A(DT_QINT32)}}, {wide, s(-10), s(20)}},
      {"QuantizedMaxPool", window("SAME"), {image, s(-1), s(3)}},
      {"QuantizedAvgPool", window("VALID"), {quantized(DT_QINT8, {1, 4, 4, 2}), s(-1), s(3)}},
      {"QuantizedConcat",
       {{"N", A(int64_t{2})}},
       {Scalar<int32_t>(1), matrix, matrix, s(-1), s(0.5f), s(1), s(3)}},
      {"QuantizedReshape", {}, {wide, Literal<int32_t>({2}, {3, -1}), s(-1), s(1)}},
      {"RequantizationRange", {}, {wide, s(-8), s(8)}},
      {"Requantize", {{"out_type", A(DT_QINT8)}}, {wide, s(-10), s(10), s(-3), s(5)}},
      {"QuantizeDownAndShrinkRange", {{"out_type", A(DT_QUINT8)}}, {wide, s(-8), s(8)}},
  };
}

std::vector<Case> OptimizerCases() {
  const auto s = [](float v) { return Scalar<float>(v); };
  return {
      {"ApplyProximalGradientDescent", {}, {F({3}), s(0.1f), s(0.05f), s(0.2f), F({3})}},
      {"ApplyProximalAdagrad", {}, {F({3}), F({3}), s(0.1f), s(0.05f), s(0.2f), F({3})}},
      {"ApplyAddSign", {}, {F({3}), F({3}), s(0.1f), s(1), s(0.9f), s(0.9f), F({3})}},
      {"ApplyPowerSign", {}, {F({3}), F({3}), s(0.1f), s(0.69f), s(0.9f), s(0.9f), F({3})}},
      {"ApplyAdagradDA",
       {},
       {F({3}), F({3}), F({3}), F({3}), s(0.1f), s(0.05f), s(0.2f), Scalar<int64_t>(3)}},
      {"SparseApplyProximalGradientDescent",
       {},
       {F({4, 2}), s(0.1f), s(0.05f), s(0.2f), F({2, 2}), I32({3, 1})}},
      {"SparseApplyProximalAdagrad",
       {},
       {F({4, 2}), F({4, 2}), s(0.1f), s(0.05f), s(0.2f), F({2, 2}), I32({3, 1})}},
      {"SparseApplyAdagradDA",
       {},
       {F({4, 2}), F({4, 2}), F({4, 2}), F({2, 2}), I32({3, 1}), s(0.1f), s(0.05f), s(0.2f),
        Scalar<int64_t>(3)}},
      {"SparseApplyAdadelta",
       {},
       {F({4, 2}), F({4, 2}), F({4, 2}), s(1), s(0.95f), s(1e-6f), F({2, 2}), I32({3, 1})}},
      {"SparseApplyCenteredRMSProp",
       {},
       {F({4, 2}), F({4, 2}), F({4, 2}), F({4, 2}), s(0.1f), s(0.9f), s(0.5f), s(1e-6f), F({2, 2}),
        I32({3, 1})}},
  };
}

// tf.random's samplers (random_sampling_ops.cc) and fractional pooling.
std::vector<Case> SamplingCases() {
  return {
      {"RandomGamma", {{"seed", A(int64_t{1})}}, {I32({2, 3}), F({2})}},
      {"RandomPoissonV2", {{"seed", A(int64_t{1})}}, {I32({3}), F({2})}},
      {"RandomPoisson", {{"seed", A(int64_t{1})}}, {I32({3}), F({2})}},
      {"RandomGammaGrad", {}, {F({2, 3}), F({3})}},
      {"FractionalMaxPool",
       {{"pooling_ratio", A(std::vector<float>{1, 1.5f, 1.5f, 1})}},
       {F({1, 5, 5, 2})}},
      {"FractionalAvgPool",
       {{"pooling_ratio", A(std::vector<float>{1, 1.5f, 1.5f, 1})}},
       {F({1, 5, 5, 2})}},
      {"FractionalMaxPoolGrad",
       {},
       {F({1, 3, 3, 1}), F({1, 2, 2, 1}), F({1, 2, 2, 1}), Literal<int64_t>({3}, {0, 2, 3}),
        Literal<int64_t>({3}, {0, 1, 3})}},
      {"FractionalAvgPoolGrad",
       {},
       {Literal<int64_t>({4}, {1, 3, 3, 1}), F({1, 2, 2, 1}), Literal<int64_t>({3}, {0, 2, 3}),
        Literal<int64_t>({3}, {0, 1, 3})}},
      {"StatelessRandomGammaV2", {}, {I32({4, 2}), Literal<int64_t>({2}, {1, 2}), F({2})}},
      {"StatelessRandomBinomial",
       {{"dtype", A(DT_INT64)}},
       {I32({4, 2}), Literal<int64_t>({2}, {1, 2}), F({2}), F({2})}},
      {"StatelessRandomPoisson",
       {{"dtype", A(DT_INT64)}},
       {I32({4, 2}), Literal<int64_t>({2}, {1, 2}), F({2})}},
      // The candidate samplers, unique and not.
      {"UniformCandidateSampler", Sampler(true, {{"range_max", A(int64_t{5})}}), {Classes()}},
      {"LogUniformCandidateSampler", Sampler(false, {{"range_max", A(int64_t{5})}}), {Classes()}},
      {"LearnedUnigramCandidateSampler",
       Sampler(true, {{"range_max", A(int64_t{5})}}),
       {Classes()}},
      {"ThreadUnsafeUnigramCandidateSampler",
       Sampler(false, {{"range_max", A(int64_t{5})}}),
       {Classes()}},
      {"FixedUnigramCandidateSampler",
       Sampler(true, {{"range_max", A(int64_t{4})},
                      {"unigrams", A(std::vector<float>{1, 2, 0.5f})},
                      {"num_reserved_ids", A(int64_t{1})}}),
       {Classes()}},
      {"AllCandidateSampler", Sampler(true, {}), {Classes()}},
      {"ComputeAccidentalHits", {{"num_true", A(int64_t{2})}}, {Classes(), I64({3}, {1, 4, 2})}},
  };
}

std::vector<Case> SpecialFunctionCases() {
  std::vector<Case> cases;
  for (const char* op : {"Dawsn", "Expint", "FresnelCos", "FresnelSin", "Spence"}) {
    cases.push_back({op, {}, {F({3})}});
  }
  return cases;
}

namespace {

// A list of `n` rows of [2] floats (the last one unset when `unset`).
Tensor List(int n, bool unset = false) {
  TensorList list(DT_FLOAT, PartialTensorShape({2}));
  for (int i = 0; i < n; ++i) list.tensors.push_back(F({2}));
  if (unset && n > 0) list.tensors.back() = Tensor();
  Tensor t(DT_VARIANT, TensorShape({}));
  *t.data<Variant>() = Variant(std::move(list));
  return t;
}

}  // namespace

std::vector<Case> ListCases() {
  const auto f32 = [](std::map<std::string, AttrValue> attrs = {}) {
    attrs["element_dtype"] = A(DT_FLOAT);
    return attrs;
  };
  const Tensor lengths = Literal<int64_t>({2}, {1, 2});
  return {
      {"EmptyTensorList", f32(), {I32({2}), Scalar<int32_t>(3)}},
      {"TensorListReserve", f32(), {I32({-1, 2}), Scalar<int32_t>(3)}},
      {"TensorListFromTensor", f32(), {F({3, 2}), I32({2})}},
      {"TensorListLength", {}, {List(3)}},
      {"TensorListElementShape", {{"shape_type", A(DT_INT64)}}, {List(2)}},
      {"TensorListGetItem", f32(), {List(3, true), Scalar<int32_t>(2), I32({2})}},
      {"TensorListSetItem", f32(), {List(3), Scalar<int32_t>(1), F({2})}},
      {"TensorListSetItem",
       f32({{"resize_if_index_out_of_bounds", A(true)}}),
       {List(3), Scalar<int32_t>(5), F({2})}},
      {"TensorListPushBack", f32(), {List(1), F({2})}},
      {"TensorListPopBack", f32(), {List(2, true), I32({2})}},
      {"TensorListStack", f32({{"num_elements", A(int64_t{3})}}), {List(3, true), I32({2})}},
      {"TensorListGather", f32(), {List(3), I32({2, 0}), I32({2})}},
      {"TensorListScatter", f32(), {F({2, 2}), I32({3, 0}), I32({2})}},
      {"TensorListScatterV2", f32(), {F({2, 2}), I32({3, 0}), I32({2}), Scalar<int32_t>(5)}},
      {"TensorListScatterIntoExistingList", f32(), {List(2), F({2, 2}), I32({1, 3})}},
      {"TensorListResize", {}, {List(2), Scalar<int32_t>(4)}},
      {"TensorListConcat", f32(), {List(2)}},
      {"TensorListConcatV2", f32(), {List(3, true), I32({-1}), Literal<int64_t>({3}, {1, 1, 1})}},
      {"TensorListSplit", f32(), {F({3, 2}), I32({-1, 2}), lengths}},
      {"TensorListConcatLists", f32(), {List(2), List(1)}},
      {"AddN", {}, {List(2, true), List(2)}},
      {"ZerosLike", {}, {List(2, true)}},
  };
}

}  // namespace bad_inputs
}  // namespace towerflow
