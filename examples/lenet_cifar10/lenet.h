// LeNet: conv in->6 k5, pool 2, conv 6->16 k5, pool 2, 400 -> 120 -> 84 -> 10.
// LeNet() is exactly the network of the user's program in docs/ARCHITECTURE.md (3x32x32 CIFAR-10 images);
// LeNet(1, 2) is LeNet-5 for 1x28x28 (Fashion-)MNIST, whose first convolution pads by 2 so that
// the 28x28 image maps to the same 400 features.
#pragma once

#include "colony.h"

namespace lenet {

using namespace colony;

class LeNet : public nn::Module {
 public:
  explicit LeNet(int64_t in_channels = 3, int64_t conv1_padding = 0) {
    conv1 = register_module("conv1",
                            std::make_shared<nn::Conv2d>(nn::Conv2dOptions(in_channels, 6, 5).padding(conv1_padding)));
    conv2 = register_module("conv2", std::make_shared<nn::Conv2d>(nn::Conv2dOptions(6, 16, 5)));
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(16 * 5 * 5, 120));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(120, 84));
    fc3 = register_module("fc3", std::make_shared<nn::Linear>(84, 10));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = F::max_pool2d(F::relu(conv1->forward(x)), 2);
    h = F::max_pool2d(F::relu(conv2->forward(h)), 2);
    h = h.flatten(1);
    h = F::relu(fc1->forward(h));
    h = F::relu(fc2->forward(h));
    return fc3->forward(h);
  }
  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::Linear> fc1, fc2, fc3;
};

}  // namespace lenet
