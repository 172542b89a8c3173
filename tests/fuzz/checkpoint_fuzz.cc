// Fuzz target: the training-checkpoint reader (optim::load_checkpoint) into a Linear(2, 2) with
// SGD and momentum, then one training step, so that restored state of the wrong shape or range
// shows up where it is used.
#include <cstdint>

#include "autograd/autograd.h"
#include "nn/linear.h"
#include "optim/checkpoint.h"
#include "optim/sgd.h"
#include "ops/raw_ops.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace colony;
  const std::string path = fuzz::write_scratch("checkpoint.safetensors", data, size);
  nn::Linear model(2, 2);
  optim::SGD opt(model.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  fuzz::expect_clean([&] {
    optim::TrainingState s = optim::load_checkpoint(path, model, opt);
    if (s.epoch < 0 || s.step < 0) std::abort();  // the counters' range is the loader's promise
    opt.zero_grad();
    model.forward(raw::ones({3, 2})).sum().backward();
    opt.step();
  });
  return 0;
}
