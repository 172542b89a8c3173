// Everything in nn/: modules, layers, functional (F::), init, save/load.
#pragma once

#include "nn/activation.h"
#include "nn/any_module.h"
#include "nn/any_value.h"
#include "nn/attention.h"
#include "nn/batchnorm.h"
#include "nn/checkpoint.h"
#include "nn/clip_grad.h"
#include "nn/containers.h"
#include "nn/conv.h"
#include "nn/embedding.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/normalization.h"
#include "nn/options.h"  // the deprecated nn::Size2 spelling
#include "nn/serialize.h"
#include "nn/transformer.h"
#include "nn/transformer_decoder.h"
#include "nn/transformer_model.h"
