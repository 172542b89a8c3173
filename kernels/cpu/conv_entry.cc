// The convolution's CPU entry points (kernels/common/conv.h) on conv.h's kernels, with the algorithm
// they choose for the shape, and on conv3d.h's. In a file of their own so that conv.cc and
// conv3d.cc hold the kernels only.
#include "kernels/common/conv.h"

#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv3d.h"

namespace colony::kernels {

void Conv2dForward::cpu(DType dtype, const Conv2dGeometry& g, const void* x, const void* w, const void* bias,
                        void* y) {
  cpu::conv2d_forward(dtype, g, x, w, bias, y, cpu::ConvAlgorithm::Auto);
}

void Conv2dBackward::cpu(DType dtype, const Conv2dGeometry& g, const void* grad_y, const void* x, const void* w,
                         void* grad_x, void* grad_w, void* grad_b) {
  cpu::conv2d_backward(dtype, g, grad_y, x, w, grad_x, grad_w, grad_b, cpu::ConvAlgorithm::Auto);
}

void Conv3dForward::cpu(DType dtype, const Conv3dGeometry& g, const void* x, const void* w, const void* bias,
                        void* y) {
  cpu::conv3d_forward(dtype, g, x, w, bias, y);
}

void Conv3dBackward::cpu(DType dtype, const Conv3dGeometry& g, const void* grad_y, const void* x, const void* w,
                         void* grad_x, void* grad_w, void* grad_b) {
  cpu::conv3d_backward(dtype, g, grad_y, x, w, grad_x, grad_w, grad_b);
}

}  // namespace colony::kernels
