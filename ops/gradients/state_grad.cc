// Ops no gradient flows through: variable updates (a training op's output
// is the updated variable, not a function to differentiate), checkpoint and
// string I/O, and the runtime's transfer and function-boundary ops. As TF's
// state_grad.py, a backward pass reaching one of them stops there.
#include "ops/grad_registry.h"

namespace towerflow {
namespace {

// Variables and their updates.
TW_REGISTER_NO_GRADIENT("Variable");
TW_REGISTER_NO_GRADIENT("VariableV2");
TW_REGISTER_NO_GRADIENT("DestroyResourceOp");
TW_REGISTER_NO_GRADIENT("DisableCopyOnRead");
TW_REGISTER_NO_GRADIENT("Assign");
TW_REGISTER_NO_GRADIENT("AssignAdd");
TW_REGISTER_NO_GRADIENT("AssignSub");
TW_REGISTER_NO_GRADIENT("AssignVariableOp");
TW_REGISTER_NO_GRADIENT("AssignAddVariableOp");
TW_REGISTER_NO_GRADIENT("AssignSubVariableOp");
TW_REGISTER_NO_GRADIENT("ScatterAdd");
TW_REGISTER_NO_GRADIENT("CountUpTo");
TW_REGISTER_NO_GRADIENT("ResourceCountUpTo");
TW_REGISTER_NO_GRADIENT("StridedSliceAssign");
TW_REGISTER_NO_GRADIENT("ResourceStridedSliceAssign");
TW_REGISTER_NO_GRADIENT("ScatterMul");
TW_REGISTER_NO_GRADIENT("ScatterDiv");
TW_REGISTER_NO_GRADIENT("ScatterMax");
TW_REGISTER_NO_GRADIENT("ScatterMin");
TW_REGISTER_NO_GRADIENT("ResourceScatterMul");
TW_REGISTER_NO_GRADIENT("ResourceScatterDiv");
TW_REGISTER_NO_GRADIENT("ResourceScatterMax");
TW_REGISTER_NO_GRADIENT("ResourceScatterMin");
TW_REGISTER_NO_GRADIENT("ScatterNdUpdate");
TW_REGISTER_NO_GRADIENT("ScatterNdAdd");
TW_REGISTER_NO_GRADIENT("ScatterNdSub");
TW_REGISTER_NO_GRADIENT("ScatterNdMax");
TW_REGISTER_NO_GRADIENT("ScatterNdMin");
TW_REGISTER_NO_GRADIENT("ResourceScatterNdUpdate");
TW_REGISTER_NO_GRADIENT("ResourceScatterNdAdd");
TW_REGISTER_NO_GRADIENT("ResourceScatterNdSub");
TW_REGISTER_NO_GRADIENT("ResourceScatterNdMax");
TW_REGISTER_NO_GRADIENT("ResourceScatterNdMin");
TW_REGISTER_NO_GRADIENT("ScatterSub");
TW_REGISTER_NO_GRADIENT("ScatterUpdate");
TW_REGISTER_NO_GRADIENT("ResourceScatterAdd");
TW_REGISTER_NO_GRADIENT("ResourceScatterSub");
TW_REGISTER_NO_GRADIENT("ResourceScatterUpdate");

// Optimizer updates.
TW_REGISTER_NO_GRADIENT("ApplyGradientDescent");
TW_REGISTER_NO_GRADIENT("ApplyMomentum");
TW_REGISTER_NO_GRADIENT("ApplyAdam");
TW_REGISTER_NO_GRADIENT("ApplyAdagrad");
TW_REGISTER_NO_GRADIENT("ApplyRMSProp");
TW_REGISTER_NO_GRADIENT("SparseApplyMomentum");
TW_REGISTER_NO_GRADIENT("SparseApplyAdagrad");
TW_REGISTER_NO_GRADIENT("SparseApplyRMSProp");
TW_REGISTER_NO_GRADIENT("ResourceApplyGradientDescent");
TW_REGISTER_NO_GRADIENT("ResourceApplyMomentum");
TW_REGISTER_NO_GRADIENT("ResourceApplyAdam");
TW_REGISTER_NO_GRADIENT("ResourceApplyAdagrad");
TW_REGISTER_NO_GRADIENT("ResourceApplyRMSProp");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyMomentum");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyAdagrad");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyRMSProp");
TW_REGISTER_NO_GRADIENT("ApplyAdaMax");
TW_REGISTER_NO_GRADIENT("ApplyAdadelta");
TW_REGISTER_NO_GRADIENT("ApplyAdagradV2");
TW_REGISTER_NO_GRADIENT("ApplyCenteredRMSProp");
TW_REGISTER_NO_GRADIENT("ApplyFtrl");
TW_REGISTER_NO_GRADIENT("ApplyFtrlV2");
TW_REGISTER_NO_GRADIENT("ResourceApplyAdaMax");
TW_REGISTER_NO_GRADIENT("ResourceApplyAdadelta");
TW_REGISTER_NO_GRADIENT("ResourceApplyAdagradV2");
TW_REGISTER_NO_GRADIENT("ResourceApplyAdamWithAmsgrad");
TW_REGISTER_NO_GRADIENT("ResourceApplyCenteredRMSProp");
TW_REGISTER_NO_GRADIENT("ResourceApplyFtrl");
TW_REGISTER_NO_GRADIENT("ResourceApplyFtrlV2");
TW_REGISTER_NO_GRADIENT("ResourceApplyKerasMomentum");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyAdagradV2");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyFtrl");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyFtrlV2");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyKerasMomentum");
TW_REGISTER_NO_GRADIENT("SparseApplyAdagradV2");
TW_REGISTER_NO_GRADIENT("SparseApplyFtrl");
TW_REGISTER_NO_GRADIENT("SparseApplyFtrlV2");
TW_REGISTER_NO_GRADIENT("ApplyAdagradDA");
TW_REGISTER_NO_GRADIENT("ApplyAddSign");
TW_REGISTER_NO_GRADIENT("ApplyPowerSign");
TW_REGISTER_NO_GRADIENT("ApplyProximalAdagrad");
TW_REGISTER_NO_GRADIENT("ApplyProximalGradientDescent");
TW_REGISTER_NO_GRADIENT("ResourceApplyAdagradDA");
TW_REGISTER_NO_GRADIENT("ResourceApplyAddSign");
TW_REGISTER_NO_GRADIENT("ResourceApplyPowerSign");
TW_REGISTER_NO_GRADIENT("ResourceApplyProximalAdagrad");
TW_REGISTER_NO_GRADIENT("ResourceApplyProximalGradientDescent");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyAdadelta");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyAdagradDA");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyCenteredRMSProp");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyProximalAdagrad");
TW_REGISTER_NO_GRADIENT("ResourceSparseApplyProximalGradientDescent");
TW_REGISTER_NO_GRADIENT("SparseApplyAdadelta");
TW_REGISTER_NO_GRADIENT("SparseApplyAdagradDA");
TW_REGISTER_NO_GRADIENT("SparseApplyCenteredRMSProp");
TW_REGISTER_NO_GRADIENT("SparseApplyProximalAdagrad");
TW_REGISTER_NO_GRADIENT("SparseApplyProximalGradientDescent");

// Stateless random numbers (TF's stateless_random_ops.py: not differentiable).
TW_REGISTER_NO_GRADIENT("StatelessRandomUniform");
TW_REGISTER_NO_GRADIENT("Multinomial");
TW_REGISTER_NO_GRADIENT("RngReadAndSkip");
TW_REGISTER_NO_GRADIENT("RngSkip");
// tf.random.Generator's draws: TF registers none (its gradients stop at the
// resource input).
TW_REGISTER_NO_GRADIENT("StatefulUniform");
TW_REGISTER_NO_GRADIENT("StatefulStandardNormalV2");
TW_REGISTER_NO_GRADIENT("StatefulTruncatedNormal");
TW_REGISTER_NO_GRADIENT("StatefulUniformInt");
TW_REGISTER_NO_GRADIENT("StatefulUniformFullInt");
TW_REGISTER_NO_GRADIENT("NonDeterministicInts");
// The candidate samplers and ComputeAccidentalHits (TF's
// candidate_sampling_ops.py: not differentiable).
TW_REGISTER_NO_GRADIENT("UniformCandidateSampler");
TW_REGISTER_NO_GRADIENT("LogUniformCandidateSampler");
TW_REGISTER_NO_GRADIENT("LearnedUnigramCandidateSampler");
TW_REGISTER_NO_GRADIENT("ThreadUnsafeUnigramCandidateSampler");
TW_REGISTER_NO_GRADIENT("FixedUnigramCandidateSampler");
TW_REGISTER_NO_GRADIENT("AllCandidateSampler");
TW_REGISTER_NO_GRADIENT("ComputeAccidentalHits");
TW_REGISTER_NO_GRADIENT("StatelessMultinomial");
TW_REGISTER_NO_GRADIENT("StatelessRandomNormal");
TW_REGISTER_NO_GRADIENT("StatelessTruncatedNormal");
TW_REGISTER_NO_GRADIENT("StatelessRandomUniformV2");
TW_REGISTER_NO_GRADIENT("StatelessRandomNormalV2");
TW_REGISTER_NO_GRADIENT("StatelessTruncatedNormalV2");
TW_REGISTER_NO_GRADIENT("StatelessRandomUniformInt");
TW_REGISTER_NO_GRADIENT("StatelessRandomUniformIntV2");
TW_REGISTER_NO_GRADIENT("StatelessRandomGetKeyCounter");
TW_REGISTER_NO_GRADIENT("StatelessRandomUniformFullInt");
TW_REGISTER_NO_GRADIENT("StatelessRandomUniformFullIntV2");
TW_REGISTER_NO_GRADIENT("StatelessRandomGetAlg");

// Lookup tables (TF's lookup_ops.py: not differentiable).
TW_REGISTER_NO_GRADIENT("HashTableV2");
TW_REGISTER_NO_GRADIENT("MutableHashTableV2");
TW_REGISTER_NO_GRADIENT("InitializeTableV2");
TW_REGISTER_NO_GRADIENT("InitializeTableFromTextFileV2");
TW_REGISTER_NO_GRADIENT("LookupTableImportV2");
TW_REGISTER_NO_GRADIENT("LookupTableInsertV2");
TW_REGISTER_NO_GRADIENT("LookupTableFindV2");
TW_REGISTER_NO_GRADIENT("LookupTableSizeV2");
TW_REGISTER_NO_GRADIENT("LookupTableExportV2");

// Checkpoints, strings and tf.Example parsing.
TW_REGISTER_NO_GRADIENT("SaveV2");
TW_REGISTER_NO_GRADIENT("RestoreV2");
TW_REGISTER_NO_GRADIENT("MergeV2Checkpoints");
TW_REGISTER_NO_GRADIENT("ShardedFilename");
TW_REGISTER_NO_GRADIENT("StringJoin");
TW_REGISTER_NO_GRADIENT("StringToHashBucketFast");
TW_REGISTER_NO_GRADIENT("StringToHashBucketStrong");
TW_REGISTER_NO_GRADIENT("StringToHashBucket");
TW_REGISTER_NO_GRADIENT("EncodeBase64");
TW_REGISTER_NO_GRADIENT("DecodeBase64");
TW_REGISTER_NO_GRADIENT("ReduceJoin");
TW_REGISTER_NO_GRADIENT("StringLength");
TW_REGISTER_NO_GRADIENT("StringLower");
TW_REGISTER_NO_GRADIENT("StringUpper");
TW_REGISTER_NO_GRADIENT("AsString");
TW_REGISTER_NO_GRADIENT("StringToNumber");
TW_REGISTER_NO_GRADIENT("Substr");
TW_REGISTER_NO_GRADIENT("StaticRegexFullMatch");
TW_REGISTER_NO_GRADIENT("StringSplit");
TW_REGISTER_NO_GRADIENT("StringSplitV2");
TW_REGISTER_NO_GRADIENT("StringStrip");
TW_REGISTER_NO_GRADIENT("StaticRegexReplace");
TW_REGISTER_NO_GRADIENT("RegexReplace");
TW_REGISTER_NO_GRADIENT("RegexFullMatch");
TW_REGISTER_NO_GRADIENT("StringFormat");
TW_REGISTER_NO_GRADIENT("UnicodeDecode");
TW_REGISTER_NO_GRADIENT("UnicodeDecodeWithOffsets");
TW_REGISTER_NO_GRADIENT("UnicodeEncode");
TW_REGISTER_NO_GRADIENT("UnicodeTranscode");
TW_REGISTER_NO_GRADIENT("UnicodeScript");
TW_REGISTER_NO_GRADIENT("ParseExample");
TW_REGISTER_NO_GRADIENT("SerializeTensor");
TW_REGISTER_NO_GRADIENT("ParseTensor");
TW_REGISTER_NO_GRADIENT("ParseExampleV2");
TW_REGISTER_NO_GRADIENT("ParseSingleExample");
TW_REGISTER_NO_GRADIENT("ParseSequenceExample");
TW_REGISTER_NO_GRADIENT("ParseSequenceExampleV2");
TW_REGISTER_NO_GRADIENT("ParseSingleSequenceExample");
TW_REGISTER_NO_GRADIENT("DecodeCompressed");
TW_REGISTER_NO_GRADIENT("DecodeJSONExample");
// TF 1's tensor handles (TF: NotDifferentiable).
TW_REGISTER_NO_GRADIENT("GetSessionHandle");
TW_REGISTER_NO_GRADIENT("GetSessionHandleV2");
TW_REGISTER_NO_GRADIENT("GetSessionTensor");
TW_REGISTER_NO_GRADIENT("DeleteSessionTensor");
TW_REGISTER_NO_GRADIENT("PrintV2");

// Bits, not values: TF registers none.
TW_REGISTER_NO_GRADIENT("Bitcast");
TW_REGISTER_NO_GRADIENT("BitwiseAnd");
TW_REGISTER_NO_GRADIENT("BitwiseOr");
TW_REGISTER_NO_GRADIENT("BitwiseXor");
TW_REGISTER_NO_GRADIENT("LeftShift");
TW_REGISTER_NO_GRADIENT("RightShift");
TW_REGISTER_NO_GRADIENT("Invert");
TW_REGISTER_NO_GRADIENT("PopulationCount");

// Image codecs and crop sampling (TF registers none: bytes and integers).
TW_REGISTER_NO_GRADIENT("DecodeJpeg");
TW_REGISTER_NO_GRADIENT("DecodeAndCropJpeg");
TW_REGISTER_NO_GRADIENT("DecodePng");
TW_REGISTER_NO_GRADIENT("DecodeImage");
TW_REGISTER_NO_GRADIENT("ExtractJpegShape");
TW_REGISTER_NO_GRADIENT("EncodeJpeg");
TW_REGISTER_NO_GRADIENT("DecodeBmp");
TW_REGISTER_NO_GRADIENT("EncodeJpegVariableQuality");
TW_REGISTER_NO_GRADIENT("ExtractGlimpse");  // TF: NotDifferentiable
TW_REGISTER_NO_GRADIENT("EncodePng");
TW_REGISTER_NO_GRADIENT("SampleDistortedBoundingBox");
TW_REGISTER_NO_GRADIENT("SampleDistortedBoundingBoxV2");
TW_REGISTER_NO_GRADIENT("StatelessSampleDistortedBoundingBox");

// Transfers and function boundaries (added by partitioning, after any
// gradient was built).
TW_REGISTER_NO_GRADIENT("Send");
TW_REGISTER_NO_GRADIENT("Recv");
TW_REGISTER_NO_GRADIENT("_Send");
TW_REGISTER_NO_GRADIENT("_Recv");
TW_REGISTER_NO_GRADIENT("_HostSend");
TW_REGISTER_NO_GRADIENT("_HostRecv");
TW_REGISTER_NO_GRADIENT("_Arg");
TW_REGISTER_NO_GRADIENT("_Retval");
TW_REGISTER_NO_GRADIENT("_DeviceArg");
TW_REGISTER_NO_GRADIENT("_DeviceRetval");
TW_REGISTER_NO_GRADIENT("_AssertShape");

}  // namespace
}  // namespace towerflow
