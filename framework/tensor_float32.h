// TensorFloat-32: whether float32 convolutions and matrix products on GPUs
// may run on tensor cores in TF32 (products of 10-bit mantissas, sums in
// float32), TensorFlow's tf.config.experimental.
// enable_tensor_float_32_execution. On by default, as in TensorFlow >= 2.4
// (its RFC 20200903-tensor-float-32-default); NVIDIA_TF32_OVERRIDE=0 in the
// environment turns it off, as it does for TensorFlow and cuBLAS. CPU
// kernels are not affected. The GPU conformance tests turn it off: they
// compare with the CPU kernels to float32 rounding.
//
//   EnableTensorFloat32Execution(false);   // full float32 from now on
//
// Thread-safe; kernels read it when they run, and a convolution keeps the
// algorithms it measured per math mode.
#ifndef TOWERFLOW_FRAMEWORK_TENSOR_FLOAT32_H_
#define TOWERFLOW_FRAMEWORK_TENSOR_FLOAT32_H_

namespace towerflow {

void EnableTensorFloat32Execution(bool enabled);
bool TensorFloat32ExecutionEnabled();

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_TENSOR_FLOAT32_H_
