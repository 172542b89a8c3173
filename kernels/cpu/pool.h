// The CPU pooling kernels by their names in kernels::cpu, for CPU code and tests that call them
// directly; their contracts are the entry points of kernels/common/pool.h, which declares them once
// for both devices.
#pragma once

#include "kernels/common/pool.h"

namespace colony::kernels::cpu {

inline constexpr auto& max_pool2d_forward = MaxPool2dForward::cpu;
inline constexpr auto& max_pool2d_backward = MaxPool2dBackward::cpu;
inline constexpr auto& avg_pool2d_forward = AvgPool2dForward::cpu;
inline constexpr auto& avg_pool2d_backward = AvgPool2dBackward::cpu;
inline constexpr auto& adaptive_avg_pool2d_forward = AdaptiveAvgPool2dForward::cpu;
inline constexpr auto& adaptive_avg_pool2d_backward = AdaptiveAvgPool2dBackward::cpu;
inline constexpr auto& adaptive_max_pool2d_forward = AdaptiveMaxPool2dForward::cpu;
inline constexpr auto& max_pool3d_forward = MaxPool3dForward::cpu;
inline constexpr auto& avg_pool3d_forward = AvgPool3dForward::cpu;
inline constexpr auto& avg_pool3d_backward = AvgPool3dBackward::cpu;
inline constexpr auto& adaptive_avg_pool3d_forward = AdaptiveAvgPool3dForward::cpu;
inline constexpr auto& adaptive_avg_pool3d_backward = AdaptiveAvgPool3dBackward::cpu;
inline constexpr auto& adaptive_max_pool3d_forward = AdaptiveMaxPool3dForward::cpu;
inline constexpr auto& fractional_max_pool_forward = FractionalMaxPoolForward::cpu;

}  // namespace colony::kernels::cpu
