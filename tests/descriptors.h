// What descriptors a process holds or passes on, for the close-on-exec and leak tests: the
// sockets_and_pipes functions return those above descriptor 2, as " socket:[123] pipe:[456]" ("" when
// none).
#pragma once

#include <string>

namespace colony::testing {

// This process's own.
std::string sockets_and_pipes_held();
// How many descriptors above 2 this process holds, of any kind (leak tests).
int descriptors_held();
// Those a program started with fork + exec (/bin/sh) inherits from this process.
std::string sockets_and_pipes_a_child_inherits();

}  // namespace colony::testing
