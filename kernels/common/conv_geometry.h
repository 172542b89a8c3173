// The shapes of a 2-D and a 3-D convolution and a 2-D pooling window as the CPU and CUDA kernels
// see them, computed and checked once by the front functions (ops/conv_ops.cc, ops/pool_ops.cc).
#pragma once

#include <cstdint>

namespace colony::kernels {

// Input [batch, in_channels, in_h, in_w], weight [out_channels, in_channels / groups, kernel_h,
// kernel_w], output [batch, out_channels, out_h, out_w]; every array contiguous.
struct Conv2dGeometry {
  int64_t batch = 1, in_channels = 1, in_h = 1, in_w = 1;
  int64_t out_channels = 1, kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
  int64_t out_h = 1, out_w = 1;

  int64_t group_in_channels() const { return in_channels / groups; }
  int64_t group_out_channels() const { return out_channels / groups; }
  // Rows of one group's im2col matrix: (in channel, kernel row, kernel column).
  int64_t patch_size() const { return group_in_channels() * kernel_h * kernel_w; }
  // Stride 1, dilation 1, one group: the shapes the CPU's AMX convolutions take (kernels/cpu/
  // conv_pixels.h, conv_channels.h, conv_weight_rows.h), whose kernel rows are runs of the image.
  bool unit_stride_dilation_one_group() const {
    return stride_h == 1 && stride_w == 1 && dilation_h == 1 && dilation_w == 1 && groups == 1;
  }
};

// Input [batch, in_channels, in_d, in_h, in_w], weight [out_channels, in_channels / groups,
// kernel_d, kernel_h, kernel_w], output [batch, out_channels, out_d, out_h, out_w]; every array
// contiguous. Output (z, y, x) reads input depth z * stride_d - pad_d + i * dilation_d, i < kernel_d
// (likewise rows and columns).
struct Conv3dGeometry {
  int64_t batch = 1, in_channels = 1, in_d = 1, in_h = 1, in_w = 1;
  int64_t out_channels = 1, kernel_d = 1, kernel_h = 1, kernel_w = 1;
  int64_t stride_d = 1, stride_h = 1, stride_w = 1, pad_d = 0, pad_h = 0, pad_w = 0;
  int64_t dilation_d = 1, dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
  int64_t out_d = 1, out_h = 1, out_w = 1;

  int64_t group_in_channels() const { return in_channels / groups; }
  int64_t group_out_channels() const { return out_channels / groups; }
  // Rows of one group's vol2col matrix: (in channel, kernel depth, kernel row, kernel column).
  int64_t patch_size() const { return group_in_channels() * kernel_d * kernel_h * kernel_w; }
  int64_t in_volume() const { return in_d * in_h * in_w; }
  int64_t out_volume() const { return out_d * out_h * out_w; }
};

// `planes` independent [in_h, in_w] planes (batch * channels) pooled to [out_h, out_w]. Window
// (oy, ox) covers rows oy * stride_h - pad_h + i * dilation_h, i < kernel_h (likewise columns).
struct Pool2dGeometry {
  int64_t planes = 1, in_h = 1, in_w = 1, out_h = 1, out_w = 1;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
};

}  // namespace colony::kernels
