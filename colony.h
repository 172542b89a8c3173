// Colony's umbrella header for users: tensor, autograd, nn, optim, data, distributed, log.
// Code inside the project includes what it uses instead.
#pragma once

#include "autograd/autograd.h"
#include "data/data.h"
#include "distributed/ddp/ddp.h"
#include "distributed/init.h"
#include "distributed/sync_batch_norm.h"
#include "distributed/zero/zero_redundancy_optimizer.h"
#include "log/log.h"
#include "nn/nn.h"
#include "nn/safetensors.h"  // io::save_safetensors / load_safetensors (nn.h leaves it out)
#include "optim/optim.h"
#include "tensor/backends.h"
#include "runtime/cuda.h"
#include "ops/cuda_graph.h"
#include "tensor/random.h"
#include "ops/raw_ops.h"
#include "tensor/threads.h"
