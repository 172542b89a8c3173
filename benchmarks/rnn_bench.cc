// An nn::LSTM training step on the CPU (float32): 2 layers, input and hidden 256, sequence 64,
// batch 32; forward, loss sum(output * g), backward, SGD step (lr 0.01). Prints
// `lstm_step us=<median microseconds per step>`. Colony's twin of rnn_pytorch.py (torch.nn.LSTM);
// benchmarks/rnn_rounds.sh alternates the two.
//   bazel run -c opt --config=cpu //benchmarks:rnn_bench -- --threads 2
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "benchmarks/bench_args.h"
#include "autograd/autograd.h"
#include "nn/rnn.h"
#include "optim/sgd.h"
#include "tensor/random.h"
#include "tensor/threads.h"

int main(int argc, char** argv) {
  using namespace colony;  // NOLINT: a benchmark program
  const auto [threads, trials] = bench::parse_threads_trials(argc, argv, {2, 10});
  set_num_threads(threads);
  std::printf("threads=%d cpu_isa=%s\n", threads, get_cpu_capability());
  const int64_t layers = 2, hidden = 256, input = 256, seq = 64, batch = 32;
  manual_seed(1);
  auto lstm = std::make_shared<nn::LSTM>(nn::LSTMOptions(input, hidden).num_layers(layers));
  optim::SGD opt(lstm->parameters(), optim::SGDOptions(0.01));
  Generator gen(2);
  Tensor x = raw::randn({seq, batch, input}, TensorOptions(kFloat32), &gen);
  Tensor g = raw::randn({seq, batch, hidden}, TensorOptions(kFloat32), &gen);
  std::vector<double> times;
  for (int t = 0; t < trials + 2; ++t) {
    auto start = std::chrono::steady_clock::now();
    opt.zero_grad();
    Tensor out = std::get<0>(lstm->forward(x));
    sum(mul(out, g)).backward();
    opt.step();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (t >= 2) times.push_back(us);  // 2 warm-up steps
  }
  std::sort(times.begin(), times.end());
  std::printf("lstm_step us=%.0f\n", times[times.size() / 2]);
  return 0;
}
