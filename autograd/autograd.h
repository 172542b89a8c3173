// Everything autograd offers users: the differentiable ops, backward/grad and the engine's
// callbacks, activation checkpointing, autocast (mixed precision), custom Functions
// (autograd::Function<T>, as libtorch's) and graph nodes, and grad mode (NoGradGuard, EnableGradGuard).
#pragma once

#include "autograd/autocast.h"
#include "autograd/checkpoint.h"
#include "autograd/custom_function.h"
#include "autograd/engine/engine.h"
#include "autograd/engine/function_node.h"
#include "autograd/engine/node.h"
#include "autograd/nn_ops.h"
#include "autograd/linalg.h"
#include "autograd/ops.h"
#include "tensor/grad_mode.h"
