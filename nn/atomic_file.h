// Crash-safe file writes: the bytes go to a temporary file beside the target, which is fsynced and
// renamed over it (then the directory is fsynced), so a reader sees the old file or the new one,
// never a half-written checkpoint.
#pragma once

#include <string>
#include <string_view>

namespace colony::io {

// Throws std::runtime_error naming the path and errno's text on failure; the target is untouched
// then and the temporary file removed.
void write_file_atomic(const std::string& path, std::string_view bytes);
// Where write_file_atomic puts the bytes before the rename: "<path>.tmp.<pid>.<host name>".
std::string temporary_path_for(const std::string& path);
// Removes the temporaries of `path` that writers on this host left when they were killed before
// the rename (their pid no longer exists). write_file_atomic calls it before each write.
void remove_stale_temporaries(const std::string& path);
// The whole file; throws std::runtime_error naming the path when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace colony::io
