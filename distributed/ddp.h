// Forwards to distributed/ddp/ddp.h, where DistributedDataParallel lives; kept so programs that
// include "distributed/ddp.h" keep building.
#pragma once

#include "distributed/ddp/ddp.h"
