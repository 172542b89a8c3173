// Fetching and unpacking dataset archives: libcurl for the transfer, libarchive for .tar.gz.
#pragma once

#include <string>

namespace colony::data {

// Unpacks the gzip-compressed tar `archive` into `dest` (created when missing). Like tar's
// --strip-components, `strip_components` leading path components are dropped from every entry
// (entries left with no name are skipped). Entries with absolute paths or ".." components are
// refused: an archive never writes outside `dest`. Errors name the archive and the entry.
void extract_tar_gz(const std::string& archive, const std::string& dest, int strip_components = 0);

// Downloads `url` (http, https, file, ...) to `path`. The bytes go to `path`.part first and are
// renamed into place once complete, so `path` never holds a partial download. Errors name the URL
// and what failed (curl's message, the HTTP status).
void download_file(const std::string& url, const std::string& path);

}  // namespace colony::data
