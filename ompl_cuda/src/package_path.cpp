#include "package_path.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace ompl_cuda::detail {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> with_ros_package_path(std::vector<std::string> folders) {
  if (const char* env = std::getenv("ROS_PACKAGE_PATH")) {
    std::stringstream list(env);
    std::string folder;
    while (std::getline(list, folder, ':'))
      if (!folder.empty()) folders.push_back(folder);
  }
  return folders;
}

bool is_file(const fs::path& p) {
  std::error_code error;
  return fs::is_regular_file(p, error);
}

}  // namespace

std::string resolve_resource(const std::string& uri, const std::string& referring_file,
                             const std::vector<std::string>& package_path, std::string* tried) {
  const std::string package_scheme = "package://", file_scheme = "file://";
  if (uri.compare(0, package_scheme.size(), package_scheme) == 0) {
    const std::string rest = uri.substr(package_scheme.size());
    const std::size_t slash = rest.find('/');
    const std::string package = rest.substr(0, slash), inside = slash == std::string::npos ? "" : rest.substr(slash + 1);
    const std::vector<std::string> folders = with_ros_package_path(package_path);
    *tried = "";
    for (const std::string& folder : folders) {
      // A folder of packages, or the package's folder itself (named as the package).
      fs::path base(folder);
      if (base.filename().empty()) base = base.parent_path();  // a trailing slash
      std::vector<fs::path> roots = {base / package};
      if (base.filename() == package) roots.push_back(base);
      for (const fs::path& root : roots) {
        const fs::path candidate = root / inside;
        *tried += (tried->empty() ? "" : ", ") + candidate.string();
        if (is_file(candidate)) return candidate.string();
      }
    }
    if (folders.empty()) *tried = "no package path given (and ROS_PACKAGE_PATH is not set)";
    return "";
  }
  fs::path path = uri.compare(0, file_scheme.size(), file_scheme) == 0 ? fs::path(uri.substr(file_scheme.size()))
                                                                      : fs::path(uri);
  if (path.is_relative()) path = fs::path(referring_file).parent_path() / path;
  *tried = path.string();
  return is_file(path) ? path.string() : "";
}

}  // namespace ompl_cuda::detail
