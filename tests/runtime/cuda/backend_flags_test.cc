// The TF32 / benchmark / deterministic switches and the policies derived from them.
#include "runtime/cuda/backend_flags.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace colony::kernels::cuda {
namespace {

TEST(BackendFlags, DefaultsArePyTorchs) {
  EXPECT_FALSE(matmul_allow_tf32());
  EXPECT_TRUE(cudnn_allow_tf32());
  EXPECT_FALSE(cudnn_benchmark());
  EXPECT_FALSE(cudnn_deterministic());
}

TEST(BackendFlags, Float32ConvolutionsNeverDownConvertToFloat16) {
  for (ConvMath rated : {ConvMath::Default, ConvMath::TensorOp, ConvMath::TensorOpAllowConversion, ConvMath::Fma}) {
    EXPECT_NE(conv_math(DType::Float32, rated, true), ConvMath::TensorOpAllowConversion);
    // Without TF32 no tensor core at all: Default would allow TF32 on Ampere and later.
    EXPECT_EQ(conv_math(DType::Float32, rated, false), ConvMath::Fma);
  }
  EXPECT_EQ(conv_math(DType::Float32, ConvMath::TensorOpAllowConversion, true), ConvMath::Default);
  EXPECT_EQ(conv_math(DType::Float32, ConvMath::TensorOp, true), ConvMath::TensorOp);
  EXPECT_EQ(conv_math(DType::Float32, ConvMath::Default, true), ConvMath::Default);
}

TEST(BackendFlags, HalfTypesUseTensorCoresAndDoubleTheDefault) {
  for (bool tf32 : {false, true}) {
    EXPECT_EQ(conv_math(DType::Float16, ConvMath::Default, tf32), ConvMath::TensorOp);
    EXPECT_EQ(conv_math(DType::BFloat16, ConvMath::TensorOpAllowConversion, tf32), ConvMath::TensorOp);
    EXPECT_EQ(conv_math(DType::Float64, ConvMath::TensorOp, tf32), ConvMath::Default);
  }
}

TEST(BackendFlags, CublasWorkspaceDefaultsFollowPyTorch) {
  EXPECT_EQ(cublas_workspace_bytes(nullptr, 9), 4096u * 1024 * 8);  // Hopper: 32 MiB
  EXPECT_EQ(cublas_workspace_bytes("", 10), 4096u * 1024 * 8);
  EXPECT_EQ(cublas_workspace_bytes(nullptr, 8), 4096u * 1024 * 2 + 16u * 1024 * 8);
}

TEST(BackendFlags, CublasWorkspaceConfigIsParsed) {
  EXPECT_EQ(cublas_workspace_bytes(":16:8", 9), 16u * 1024 * 8);
  EXPECT_EQ(cublas_workspace_bytes(":4096:2:16:8", 9), 4096u * 1024 * 2 + 16u * 1024 * 8);
  EXPECT_EQ(cublas_workspace_bytes(":0:0", 9), 0u);
}

TEST(BackendFlags, BadCublasWorkspaceConfigIsRefusedWithTheExpectedSyntax) {
  for (const char* bad : {"4096:8", ":4096", ":4096:", ":a:8", ":4096:8:", "::8", ":4096:8x"}) {
    try {
      cublas_workspace_bytes(bad, 9);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("CUBLAS_WORKSPACE_CONFIG=") + bad), std::string::npos);
      EXPECT_NE(std::string(e.what()).find(":SIZE_KIB:COUNT"), std::string::npos);
    }
  }
}

TEST(BackendFlags, SwitchesAreSettable) {
  set_matmul_allow_tf32(true);
  set_cudnn_allow_tf32(false);
  set_cudnn_benchmark(true);
  set_cudnn_deterministic(true);
  EXPECT_TRUE(matmul_allow_tf32());
  EXPECT_FALSE(cudnn_allow_tf32());
  EXPECT_TRUE(cudnn_benchmark());
  EXPECT_TRUE(cudnn_deterministic());
  set_matmul_allow_tf32(false);
  set_cudnn_allow_tf32(true);
  set_cudnn_benchmark(false);
  set_cudnn_deterministic(false);
}

}  // namespace
}  // namespace colony::kernels::cuda
