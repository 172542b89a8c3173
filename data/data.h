// Everything in data/: datasets, transforms, samplers, the DataLoader, character-level text.
#pragma once

#include "data/archive.h"
#include "data/cifar10.h"
#include "data/dataloader.h"
#include "data/dataset.h"
#include "data/image_dataset.h"
#include "data/iterable_dataset.h"
#include "data/mnist.h"
#include "data/sampler.h"
#include "data/subset.h"
#include "data/synthetic.h"
#include "data/tensor_dataset.h"
#include "data/text.h"
#include "data/token_blocks.h"
#include "data/transformed_dataset.h"
#include "data/transforms.h"
#include "data/worker_info.h"
