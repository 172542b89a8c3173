// Everything in optim/: optimizers, LR schedulers, gradient clipping, loss scaling (GradScaler).
#pragma once

#include "optim/adam.h"
#include "optim/checkpoint.h"
#include "optim/clip_grad.h"
#include "optim/grad_scaler.h"
#include "optim/lr_scheduler.h"
#include "optim/optimizer.h"
#include "optim/sgd.h"
