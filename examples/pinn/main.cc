// A physics-informed network: a tanh MLP u(x) trained so that u'' = -pi^2 sin(pi x) on [0, 1] with
// u(0) = u(1) = 0, whose solution is sin(pi x). The loss holds u'' itself, taken by differentiating
// the network twice with autograd::grad(..., create_graph=true); its backward to the weights is then
// a third derivative through every layer. Prints the loss as it falls and ends with the largest
// error against sin(pi x) on a grid the training never saw.
//
//   ./bazelw run -c opt //examples/pinn [-- --steps 2000 --threads 2]
#include <cmath>
#include <iostream>

#include <CLI/CLI.hpp>

#include "colony.h"
using namespace colony;

struct Mlp : nn::Module {
  explicit Mlp(int64_t width) {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(1, width));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(width, width));
    fc3 = register_module("fc3", std::make_shared<nn::Linear>(width, 1));
  }
  Tensor forward(const Tensor& x) override {
    return fc3->forward(tanh(fc2->forward(tanh(fc1->forward(x)))));
  }
  std::shared_ptr<nn::Linear> fc1, fc2, fc3;
};

int main(int argc, char** argv) {
  int steps = 2000, threads = 2, width = 32;
  CLI::App app{"Solve u'' = -pi^2 sin(pi x), u(0) = u(1) = 0, with a physics-informed MLP"};
  app.add_option("--steps", steps, "Adam steps")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads")->check(CLI::PositiveNumber);
  app.add_option("--width", width, "hidden units per layer")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  set_num_threads(threads);
  manual_seed(0);

  const double pi = 3.14159265358979323846;
  auto model = std::make_shared<Mlp>(width);
  optim::Adam optimizer(model->parameters(), optim::AdamOptions(3e-3));
  const Tensor boundary = tensor({0.0, 1.0}).reshape({2, 1});

  for (int step = 1; step <= steps; ++step) {
    // 64 collocation points drawn afresh each step; they require grad so u can be differentiated in x.
    Tensor x = rand({64, 1}).requires_grad_(true);
    Tensor u = model->forward(x);
    Tensor du = autograd::grad({u.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    Tensor d2u = autograd::grad({du.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    Tensor residual = d2u + sin(x * pi) * (pi * pi);
    Tensor loss = residual.pow(2).mean() + model->forward(boundary).pow(2).mean() * 10.0;
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    if (step % 500 == 0 || step == 1) std::cout << "step " << step << " loss " << loss.item<double>() << "\n";
  }

  NoGradGuard no_grad;
  model->eval();
  Tensor grid = linspace(0.0, 1.0, 101).reshape({101, 1});
  Tensor error = (model->forward(grid) - sin(grid * pi)).abs().max();
  std::cout << "max_abs_error=" << error.item<double>() << "\n";
}
