// Everything autograd offers users: the differentiable ops, backward/grad and the engine's
// callbacks, autocast (mixed precision), graph nodes (for custom functions), and grad mode (NoGradGuard, EnableGradGuard).
#pragma once

#include "autograd/autocast.h"
#include "autograd/engine.h"
#include "autograd/function_node.h"
#include "autograd/node.h"
#include "autograd/nn_ops.h"
#include "autograd/ops.h"
#include "tensor/grad_mode.h"
