// nn::ParameterDict: parameters by name, in insertion order (libtorch's ParameterDict, torch.nn's
// ParameterDict). Each is a parameter of the dict, so parameters(), state_dict(), to() and
// optimizers see it under its key ("<dict's name>.<key>" in an enclosing module).
//
//   auto scales = model->register_module("scales", std::make_shared<nn::ParameterDict>());
//   scales->insert("q", raw::ones({64}).requires_grad_(true));
//   Tensor q = (*scales)["q"];
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"

namespace colony::nn {

class ParameterDict : public Module {
 public:
  ParameterDict() = default;
  explicit ParameterDict(const NamedTensors& parameters);
  // Registers `param` under `key`, requiring grad when `param` does (libtorch's insert); a key
  // already there is refused, as libtorch's insert refuses it (update() replaces).
  Tensor& insert(const std::string& key, const Tensor& param);
  // Removes and returns the parameter of `key`; throws naming the keys there are when absent.
  Tensor pop(const std::string& key);
  // Sets each (key, parameter): a key already there keeps its place and takes the new tensor
  // (of any shape), a new key is appended, as torch's OrderedDict assignment.
  void update(const NamedTensors& parameters);
  void clear();
  bool contains(const std::string& key) const;
  size_t size() const { return items().size(); }
  bool empty() const { return size() == 0; }
  std::vector<std::string> keys() const;
  std::vector<Tensor> values() const;
  NamedTensors items() const { return named_parameters(false); }
  // The parameter of `key`; throws naming the keys there are when absent.
  Tensor get(const std::string& key) const;
  Tensor operator[](const std::string& key) const { return get(key); }
  std::string extra_repr() const override;

 protected:
  // A new ParameterDict holding a clone of each parameter, under the same names.
  std::shared_ptr<Module> clone_module() const override;
};

}  // namespace colony::nn
