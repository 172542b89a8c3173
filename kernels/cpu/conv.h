// 2-D convolution (cross-correlation, as in PyTorch) on the CPU: forward and the three gradients,
// float32 and float64, on contiguous NCHW arrays; bfloat16 too where conv2d_native_16bit says so.
//
// Images are split over the thread pool (each chunk owns scratch memory and a private weight
// gradient, summed at the end in a fixed order), and each image is one or a few small matrix
// products done single-threaded inside its chunk. Two ways to form those products:
//  - Direct (stride 1 only): the weights multiply shifted windows of the zero-padded image read in
//    place. Output pixel (y, x) is computed at y * Wp + x of a grid as wide as the padded input
//    (Wp), so row (c, i, j) of the implicit im2col matrix is simply plane c read from
//    i * dilation * Wp + j * dilation on; the Wp - Wo extra columns per row are computed and thrown
//    away. The input gradient is scattered the same way, straight into the image (no col2im).
//    kernels/cpu/small_gemm.h has the register-tiled products.
//  - Im2col: an explicit im2col matrix (a block of output rows at a time) and Eigen's GEMM; any
//    stride, and the better choice once the matrices are large enough for GEMM packing to pay.
// bfloat16 takes the direct algorithm's implicit im2col either to the AVX512_BF16 register tiles or,
// where conv2d_bf16_on_amx says, to AMX tiles (amx_gemm.h; conv.cc's "bfloat16 on AMX tiles"); with
// both, an input gradient left off AMX, and every pass with fewer than 16 output channels per group,
// is computed in float32 from operands widened inside the kernels (faster there).
// A bfloat16 forward (from 6 output channels) and input gradient (from 16) run with the pixels on
// the AMX tiles' rows instead (conv_pixels.h: no im2col packing at all) where conv2d_bf16_pixels
// and conv2d_bf16_pixels_input say; a bfloat16 forward with the output channels on the rows and
// the im2col read by strided tile loads (conv_channels.h) where conv2d_bf16_channels says; every
// stride-1, one-group bfloat16 weight gradient on AMX reads a copy of the image the same way
// (conv_weight_rows.h, conv2d_bf16_weight_rows).
// benchmarks/conv_bench.cc times them on the LeNet shapes and wider layers (--bf16: the bfloat16
// tiles per pass; --pixels, --channels, --weight-rows: each AMX layout against the others).
#pragma once

#include "kernels/common/conv_geometry.h"
#include "kernels/common/dtype.h"

namespace colony::kernels::cpu {

// Amx: bfloat16 only, the direct algorithm's implicit im2col on AMX tiles (amx_gemm.h); Direct
// then means the AVX512_BF16 tiles (small_gemm_bf16.h). AmxPixels: bfloat16, the forward and the
// input gradient with the pixels on the AMX tiles' rows (conv_pixels.h); its weight gradient runs
// as Auto's. AmxChannels: bfloat16, the forward with the output channels on the AMX tiles' rows and
// the im2col read in place (conv_channels.h); its gradients run as Auto's.
enum class ConvAlgorithm { Auto, Direct, Im2col, Amx, AmxPixels, AmxChannels };
enum class ConvPass { Forward, BackwardInput, BackwardWeight };

// Whether the kernels below take `dtype` (a 16-bit type) for this shape. True for bfloat16 with
// stride 1 where AVX512_BF16 (small_gemm_bf16.h) or AMX-BF16 (amx_gemm.h) is active: the products
// multiply bfloat16 operands with float32 accumulation, and each output (y, or a gradient) is
// rounded once. With both active, fewer than 16 output channels per group (LeNet's conv1) are
// computed on the float32 direct tiles from operands widened inside the kernels, an image at a
// time (measured faster than the bfloat16 tiles there: conv.cc), each output rounded once: the
// values widening the tensors would give; their forward runs on conv_channels.h's AMX product
// instead where conv2d_bf16_channels says (faster still: conv.cc).
// Elsewhere callers widen 16-bit operands to float32 and round the result (ops/cpu_widen.h),
// which gives the same values up to the order of the float32 additions.
bool conv2d_native_16bit(DType dtype, const Conv2dGeometry& g);

// Whether Auto runs this bfloat16 pass on AMX tiles rather than the AVX512_BF16 ones: false
// where AMX is not active (has_amx_gemm()), true where it is and AVX512_BF16 is not (only a test's
// emulated AMX copy), else by the output channels per group, as measured in conv.cc: at least 6
// for the forward, 16 for the weight gradient, 32 for the input gradient.
bool conv2d_bf16_on_amx(const Conv2dGeometry& g, ConvPass pass);

// Whether Auto runs this bfloat16 forward with the output pixels on the AMX tiles' rows
// (conv_pixels.h) rather than conv2d_bf16_on_amx's choice: where that product runs here
// (active_conv_pixels_fns()) and takes the shape (conv_pixels_fit), with at least 6 output
// channels per group, as measured in conv.cc.
bool conv2d_bf16_pixels(const Conv2dGeometry& g);
// The same for the input gradient (conv2d_backward_input_pixels: conv_pixels_input_fit).
bool conv2d_bf16_pixels_input(const Conv2dGeometry& g);
// Whether Auto runs this bfloat16 weight (and bias) gradient on conv_weight_rows.h's product (the
// image copy read by strided tile loads, the pixels on the products' depth): where that product runs
// here (active_conv_weight_rows_fns()) and takes the shape (conv_weight_rows_fit: faster than the
// other paths on every shape measured, conv.cc).
bool conv2d_bf16_weight_rows(const Conv2dGeometry& g);

// Whether Auto runs this bfloat16 forward with the output channels on the AMX tiles' rows
// (conv_channels.h) before any other choice: where that product runs here
// (active_conv_channels_fns()) and takes the shape (conv_channels_fit), for the shapes measured
// faster in conv.cc.
bool conv2d_bf16_channels(const Conv2dGeometry& g);

// What Auto runs for this shape and pass (a backward call may use one algorithm for grad_x and
// the other for grad_w and grad_b).
ConvAlgorithm choose_conv_algorithm(const Conv2dGeometry& g, ConvPass pass);

// y = conv(x, w) + bias (bias may be null). Direct requires stride 1, Amx bfloat16 (and AMX-BF16
// active); both throw otherwise.
void conv2d_forward(DType dtype, const Conv2dGeometry& g, const void* x, const void* w, const void* bias, void* y,
                    ConvAlgorithm algo = ConvAlgorithm::Auto);

// Gradients of sum(grad_y * conv(x, w) + bias) with respect to x, w and bias. Each of grad_x,
// grad_w, grad_b may be null when not wanted (a first layer needs no grad_x); the others are
// overwritten. x is only read when grad_w is wanted, w only when grad_x is.
void conv2d_backward(DType dtype, const Conv2dGeometry& g, const void* grad_y, const void* x, const void* w,
                     void* grad_x, void* grad_w, void* grad_b, ConvAlgorithm algo = ConvAlgorithm::Auto);

}  // namespace colony::kernels::cpu
