#pragma once
// How the readers quote what a file holds (a name, a value, a library's message) in an error message:
// whole up to `most` bytes, else its first `most` and "...", so that a message stays short whatever
// the file holds.
#include <cstddef>
#include <string>

namespace ompl_cuda::detail {

inline std::string shown(const std::string& text, std::size_t most = 80) {
  return text.size() <= most ? text : text.substr(0, most) + "...";
}

}  // namespace ompl_cuda::detail
