// Everything in optim/: optimizers, LR schedulers, gradient clipping, loss scaling (GradScaler).
#pragma once

#include "optim/adadelta.h"
#include "optim/adagrad.h"
#include "optim/adam.h"
#include "optim/adamax.h"
#include "optim/asgd.h"
#include "optim/checkpoint.h"
#include "optim/clip_grad.h"
#include "optim/grad_scaler.h"
#include "optim/lbfgs.h"
#include "optim/lr_scheduler.h"
#include "optim/nadam.h"
#include "optim/optimizer.h"
#include "optim/radam.h"
#include "optim/rmsprop.h"
#include "optim/rprop.h"
#include "optim/sgd.h"
