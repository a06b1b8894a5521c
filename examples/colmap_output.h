#pragma once
// Writing a COLMAP model where a program's --output_path and --output_type say, as bal_to_colmap and
// colmap_ba do: the folder made if missing (COLMAP's own writers expect it), BIN or TXT.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "ceres_cuda/colmap_model.h"
#include "linalg_cuda/errors.h"

namespace examples {

inline void write_colmap_model(const ceres_cuda::ColmapModel& model, const std::string& folder,
                               const std::string& type) {
  if (mkdir(folder.c_str(), 0777) != 0 && errno != EEXIST)
    throw linalg_cuda::Error(folder + ": cannot make the folder: " + std::strerror(errno));
  if (type == "BIN")
    model.write_binary(folder);
  else
    model.write_text(folder);
}

}  // namespace examples
