// nn::ParameterList: parameters by position (libtorch's ParameterList, torch.nn's ParameterList).
// Each is a parameter of the list named by its index, so parameters(), state_dict() ("<list's
// name>.0", ".1", ...), to() and optimizers see it.
//
//   auto scales = model->register_module("scales", std::make_shared<nn::ParameterList>());
//   scales->append(raw::ones({64}).requires_grad_(true));
//   Tensor first = (*scales)[0];
#pragma once

#include <vector>

#include "nn/module.h"

namespace colony::nn {

class ParameterList : public Module {
 public:
  ParameterList() = default;
  explicit ParameterList(const std::vector<Tensor>& parameters) { extend(parameters); }
  // Registers `param` as the next index, requiring grad when `param` does (as ParameterDict::insert).
  Tensor& append(const Tensor& param);
  void extend(const std::vector<Tensor>& parameters);
  size_t size() const { return items().size(); }
  bool empty() const { return size() == 0; }
  // The parameter at `index`; a negative index counts from the end, as in Python. Out of range
  // throws std::out_of_range "index 5 is out of range", torch's message.
  Tensor get(int64_t index) const;
  Tensor operator[](int64_t index) const { return get(index); }
  // Replaces the parameter at `index` (torch's `plist[i] = p`); the new tensor may have any shape.
  void set(int64_t index, const Tensor& param);
  std::vector<Tensor> values() const;
  NamedTensors items() const { return named_parameters(false); }
  std::string extra_repr() const override;

 protected:
  // A new ParameterList holding a clone of each parameter, under the same names.
  std::shared_ptr<Module> clone_module() const override;
};

}  // namespace colony::nn
