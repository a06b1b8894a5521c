#pragma once
// Where ROS finds the files a robot description names: `package://NAME/rest` is rest in the folder
// NAME of one of the package path's folders (searched in order, then ROS_PACKAGE_PATH's), `file://PATH`
// is PATH, and a relative path is relative to the file that names it.
#include <string>
#include <vector>

namespace ompl_cuda::detail {

// The file's path, or "" where it does not exist; *tried says where it was looked for.
std::string resolve_resource(const std::string& uri, const std::string& referring_file,
                             const std::vector<std::string>& package_path, std::string* tried);

}  // namespace ompl_cuda::detail
