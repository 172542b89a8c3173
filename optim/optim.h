// Everything in optim/: optimizers, LR schedulers, gradient clipping.
#pragma once

#include "optim/adam.h"
#include "optim/checkpoint.h"
#include "optim/clip_grad.h"
#include "optim/lr_scheduler.h"
#include "optim/optimizer.h"
#include "optim/sgd.h"
