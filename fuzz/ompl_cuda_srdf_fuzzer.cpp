// libFuzzer harness of ompl_cuda's SRDF reader (RobotModel::load with an SRDF, read with tinyxml2).
// The input is the whole SRDF, written to a scratch file and read with a fixed URDF (the Panda's tree,
// ompl_cuda_fuzz_robot.h). A model that is read must hold what the SRDF gives as RobotModel promises:
// groups named once, each with its variables in the model's order, none twice, and their joints'
// names; disabled collision pairs of two links each (first < second), sorted, none twice; and each
// group_state of the file (found here by tinyxml2 as well) a state of finite values for its group.
// Bad input must end in linalg_cuda's typed errors (fuzz_support.h says which still count as findings).
#include <tinyxml2.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "ompl_cuda_fuzz_robot.h"

namespace {

using ompl_cuda::RobotModel;

const fuzz::ScratchDir& scratch() {
  static const fuzz::ScratchDir dir("srdf");
  return dir;
}

const std::string& urdf() {
  static const std::string path = fuzz::write_panda_like(scratch());
  return path;
}

void check_groups(const RobotModel& model) {
  const std::vector<std::string> names = model.group_names();
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (k > 0 && !(names[k - 1] < names[k])) fuzz::finding("group names not sorted, or one twice");
    ompl_cuda::PlanningGroup group;
    try {
      group = model.group(names[k]);
    } catch (const linalg_cuda::Error& error) {
      fuzz::finding("a group that group_names() gives cannot be had: " + std::string(error.what()));
    }
    if (group.name != names[k]) fuzz::finding("group '" + names[k] + "' comes back as '" + group.name + "'");
    if (group.joint_names.size() != group.variables.size()) fuzz::finding("a group whose joint names are not its variables'");
    for (std::size_t i = 0; i < group.variables.size(); ++i) {
      const int v = group.variables[i];
      if (v < 0 || v >= model.num_variables() || (i > 0 && !(group.variables[i - 1] < v)))
        fuzz::finding("group '" + names[k] + "' has a variable out of range, out of order or twice");
      if (group.joint_names[i] != model.variable_name(v)) fuzz::finding("group '" + names[k] + "' names another joint");
    }
  }
  const auto& pairs = model.disabled_collisions();
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const auto [a, b] = pairs[k];
    if (!(0 <= a && a < b && b < static_cast<int>(model.links().size()))) fuzz::finding("a disabled pair that is not two links, first < second");
    if (k > 0 && !(pairs[k - 1] < pairs[k])) fuzz::finding("disabled pairs not sorted, or one twice");
  }
}

// Every <group_state group= name=> under the root must be a state of finite values.
void check_states(const RobotModel& model, const uint8_t* data, size_t size) {
  tinyxml2::XMLDocument doc;
  if (doc.Parse(reinterpret_cast<const char*>(data), size) != tinyxml2::XML_SUCCESS || !doc.RootElement())
    fuzz::finding("the reader took an SRDF that is not XML");
  const std::vector<double> base = model.default_state();
  for (const tinyxml2::XMLElement* s = doc.RootElement()->FirstChildElement("group_state"); s;
       s = s->NextSiblingElement("group_state")) {
    const char* group = s->Attribute("group");
    const char* name = s->Attribute("name");
    if (!group || !name) fuzz::finding("the reader took a group_state without group or name");
    std::vector<double> state;
    try {
      state = model.named_state(group, name, base);
    } catch (const linalg_cuda::Error& error) {
      fuzz::finding("a group_state of the file cannot be had: " + std::string(error.what()));
    }
    if (static_cast<int>(state.size()) != model.num_variables()) fuzz::finding("a named state of another size");
    for (const double v : state)
      if (!std::isfinite(v)) fuzz::finding("a named state with a value that is not finite");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::load_panda_like(scratch());  // the harness' robot must read
  urdf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = scratch().write("robot.srdf", data, size);
  RobotModel model;
  try {
    model = RobotModel::load(urdf(), path);
  } catch (const linalg_cuda::Error& error) {
    fuzz::checked_message(error, path, fuzz::line_count(data, size), data, size);
    return 0;
  }
  check_groups(model);
  check_states(model, data, size);
  return 0;
}
