// The channel and alpha dropout modules (torch.nn.Dropout1d/2d/3d, AlphaDropout,
// FeatureAlphaDropout), beside Dropout (layers.h): each takes DropoutOptions (p, inplace), is
// active in training mode only, and calls its F:: function (nn/functional_dropout.cc). Printed as
// torch prints them: `Dropout2d(p=0.5, inplace=False)`.
#pragma once

#include <string>

#include "nn/functional.h"
#include "nn/layers.h"

namespace colony::nn {

using Dropout1dOptions = DropoutOptions;
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

class Dropout1d : public detail::DropoutBase {
  COLONY_CLONEABLE
 public:
  explicit Dropout1d(const DropoutOptions& options = {}) : DropoutBase("Dropout1d", options) {}
  Tensor forward(const Tensor& input) override;
};

class Dropout2d : public detail::DropoutBase {
  COLONY_CLONEABLE
 public:
  explicit Dropout2d(const DropoutOptions& options = {}) : DropoutBase("Dropout2d", options) {}
  Tensor forward(const Tensor& input) override;
};

class Dropout3d : public detail::DropoutBase {
  COLONY_CLONEABLE
 public:
  explicit Dropout3d(const DropoutOptions& options = {}) : DropoutBase("Dropout3d", options) {}
  Tensor forward(const Tensor& input) override;
};

class AlphaDropout : public detail::DropoutBase {
  COLONY_CLONEABLE
 public:
  explicit AlphaDropout(const DropoutOptions& options = {}) : DropoutBase("AlphaDropout", options) {}
  Tensor forward(const Tensor& input) override;
};

class FeatureAlphaDropout : public detail::DropoutBase {
  COLONY_CLONEABLE
 public:
  explicit FeatureAlphaDropout(const DropoutOptions& options = {}) : DropoutBase("FeatureAlphaDropout", options) {}
  Tensor forward(const Tensor& input) override;
};

}  // namespace colony::nn
