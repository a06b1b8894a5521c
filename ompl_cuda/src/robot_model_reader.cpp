// RobotModel::load: the URDF through urdfdom (its kinematic tree, limits, mimics and collision
// geometry), the SRDF through tinyxml2 (no SRDF parser is packaged by Debian). tinyxml2 also reads the
// URDF first, so that a malformed file is reported with its line, and so that a joint or link that
// cannot be taken is named with the line that declares it.
#include <console_bridge/console.h>
#include <tinyxml2.h>
#include <urdf_parser/urdf_parser.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>

#include "linalg_cuda/errors.h"
#include "ompl_cuda/robot_model.h"
#include "package_path.h"
#include "quoted_text.h"
#include "robot_kinematics.h"

namespace ompl_cuda {

using linalg_cuda::ParseError;

namespace {

// The largest values a URDF may give, far beyond any robot's, so that what the model computes stays
// exact and finite: angles (a revolute joint's limits and mimicked values) where the kinematics' sin
// and cos are accurate (deterministic_trig.h), lengths (origins, prismatic limits and mimicked values,
// collision sizes and mesh scales) whose sums along any chain of joints stay far from overflow.
constexpr double kMaxAngle = 1e5;   // radians
constexpr double kMaxLength = 1e6;  // metres

bool within(double v, double most) { return std::fabs(v) <= most; }  // false for NaN
bool within(const double (&v)[3], double most) { return within(v[0], most) && within(v[1], most) && within(v[2], most); }

std::string read_file(const std::string& file, const char* what) {
  std::error_code ignored;
  if (std::filesystem::is_directory(file, ignored)) throw ParseError(file, 0, std::string("is a directory, not a ") + what);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ParseError(file, 0, std::string("cannot open the ") + what + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ParseError(file, 0, std::string("cannot read the ") + what);
  return text.str();
}

// The file as XML, or a ParseError with tinyxml2's line and message.
void parse_xml(const std::string& file, const std::string& text, tinyxml2::XMLDocument* doc, const char* what) {
  if (doc->Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS)
    throw ParseError(file, doc->ErrorLineNum(), std::string("not well-formed XML (") + what + "): " + detail::shown(doc->ErrorStr(), 300));
}

// Lines of the elements <tag name="..."> directly under the root, by name.
std::map<std::string, int> element_lines(const tinyxml2::XMLDocument& doc, const char* tag) {
  std::map<std::string, int> lines;
  if (const tinyxml2::XMLElement* root = doc.RootElement())
    for (const tinyxml2::XMLElement* e = root->FirstChildElement(tag); e; e = e->NextSiblingElement(tag))
      if (const char* name = e->Attribute("name")) lines.emplace(name, e->GetLineNum());
  return lines;
}

// urdfdom reports why a file is not a URDF through console_bridge; this keeps its last error.
class ErrorCapture : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_ERROR) last_error = text;
  }
  std::string last_error;
};

urdf::ModelInterfaceSharedPtr parse_urdf(const std::string& text, std::string* error) {
  static std::mutex mutex;  // console_bridge's handler is global
  std::lock_guard<std::mutex> lock(mutex);
  ErrorCapture capture;
  console_bridge::useOutputHandler(&capture);
  urdf::ModelInterfaceSharedPtr model = urdf::parseURDF(text);
  console_bridge::restorePreviousOutputHandler();
  *error = capture.last_error;
  return model;
}

Transform to_transform(const urdf::Pose& pose) {
  double q[4];
  pose.rotation.getQuaternion(q[0], q[1], q[2], q[3]);
  const double position[3] = {pose.position.x, pose.position.y, pose.position.z};
  return transform_from(position, q);
}

}  // namespace

class RobotModelReader {
 public:
  RobotModelReader(RobotModel* model, std::vector<std::string> package_path)
      : m_(*model), package_path_(std::move(package_path)) {}

  void read_urdf(const std::string& file) {
    urdf_file_ = file;
    const std::string text = read_file(file, "URDF");
    tinyxml2::XMLDocument doc;
    parse_xml(file, text, &doc, "URDF");
    if (!doc.RootElement() || std::string(doc.RootElement()->Name()) != "robot")
      throw ParseError(file, doc.RootElement() ? doc.RootElement()->GetLineNum() : 1, "the root element is not <robot>");
    joint_lines_ = element_lines(doc, "joint");
    link_lines_ = element_lines(doc, "link");
    check_tree(doc);
    std::string error;
    const urdf::ModelInterfaceSharedPtr urdf = parse_urdf(text, &error);
    if (!urdf) throw ParseError(file, 0, "not a valid URDF: " + (error.empty() ? "urdfdom refused it" : detail::shown(error, 300)));
    m_.name_ = urdf->getName();
    urdf_links_ = urdf.get();
    add_subtree(urdf->getRoot(), -1);
    urdf_links_ = nullptr;
    resolve_mimics(*urdf);
    std::vector<detail::KinematicJoint> kinematics;
    for (const RobotJoint& j : m_.joints_) kinematics.push_back(kinematic(j));
    m_.kinematics_ = std::make_shared<const std::vector<detail::KinematicJoint>>(std::move(kinematics));
  }

  void read_srdf(const std::string& file) {
    const std::string text = read_file(file, "SRDF");
    tinyxml2::XMLDocument doc;
    parse_xml(file, text, &doc, "SRDF");
    const tinyxml2::XMLElement* root = doc.RootElement();
    if (!root || std::string(root->Name()) != "robot")
      throw ParseError(file, root ? root->GetLineNum() : 1, "the root element is not <robot>");
    srdf_file_ = file;
    // Groups may name groups declared after them: read all, then resolve.
    std::map<std::string, const tinyxml2::XMLElement*> groups;
    for (const tinyxml2::XMLElement* g = root->FirstChildElement("group"); g; g = g->NextSiblingElement("group"))
      groups[required(g, "name")] = g;
    for (const auto& [name, element] : groups) {
      std::set<int> joints;
      std::vector<std::string> path;
      collect_group(groups, name, &joints, &path);
      PlanningGroup group;
      group.name = name;
      for (const int j : joints)
        if (m_.joints_[j].variable >= 0) group.variables.push_back(m_.joints_[j].variable);
      std::sort(group.variables.begin(), group.variables.end());
      for (const int v : group.variables) group.joint_names.push_back(m_.variable_name(v));
      m_.groups_[name] = group;
    }
    for (const tinyxml2::XMLElement* s = root->FirstChildElement("group_state"); s;
         s = s->NextSiblingElement("group_state")) {
      const std::string group = required(s, "group"), name = required(s, "name");
      if (!m_.groups_.count(group)) throw ParseError(file, s->GetLineNum(), "group_state of an unknown group '" + detail::shown(group) + "'");
      std::map<std::string, double>& values = m_.group_states_[{group, name}];
      for (const tinyxml2::XMLElement* j = s->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
        const std::string joint = required(j, "name");
        if (m_.joint_index(joint) < 0)
          throw ParseError(file, j->GetLineNum(), "group_state '" + detail::shown(name) + "' sets joint '" + detail::shown(joint) + "', which the URDF does not have");
        double value = 0;
        if (j->QueryDoubleAttribute("value", &value) != tinyxml2::XML_SUCCESS || !std::isfinite(value))
          throw ParseError(file, j->GetLineNum(), "group_state '" + detail::shown(name) + "': joint '" + detail::shown(joint) + "' needs a finite value");
        values[joint] = value;
      }
    }
    for (const tinyxml2::XMLElement* d = root->FirstChildElement("disable_collisions"); d;
         d = d->NextSiblingElement("disable_collisions")) {
      const int a = link(d, "link1"), b = link(d, "link2");
      if (a != b) m_.disabled_.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::sort(m_.disabled_.begin(), m_.disabled_.end());
    m_.disabled_.erase(std::unique(m_.disabled_.begin(), m_.disabled_.end()), m_.disabled_.end());
  }

 private:
  // urdfdom takes a link that two joints move, or joints that close a loop, as long as one link is left
  // without a parent, and then leaks the loop's links (they hold each other); such a file is refused
  // here, before urdfdom reads it.
  void check_tree(const tinyxml2::XMLDocument& doc) const {
    std::map<std::string, std::string> parent_of;  // link -> parent link
    std::map<std::string, std::string> joint_of;   // link -> the joint that moves it
    for (const tinyxml2::XMLElement* j = doc.RootElement()->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
      const tinyxml2::XMLElement* parent = j->FirstChildElement("parent");
      const tinyxml2::XMLElement* child = j->FirstChildElement("child");
      const char* parent_link = parent ? parent->Attribute("link") : nullptr;
      const char* child_link = child ? child->Attribute("link") : nullptr;
      if (!parent_link || !child_link) continue;  // urdfdom says what is missing
      const char* name = j->Attribute("name");
      const std::string joint = name ? name : "";
      const auto [at, added] = joint_of.emplace(child_link, joint);
      if (!added)
        throw ParseError(urdf_file_, j->GetLineNum(), "link '" + detail::shown(child_link) + "' is the child of joints '" +
                                                          detail::shown(at->second) + "' and '" + detail::shown(joint) + "'");
      parent_of[child_link] = parent_link;
    }
    // Each link has one parent at most: following parents from any link ends, or comes back to a link
    // of the walk (a loop).
    std::map<std::string, int> walk_of;  // link -> the walk that met it first
    int walk = 0;
    for (const auto& start : parent_of) {
      ++walk;
      for (auto at = parent_of.find(start.first); at != parent_of.end(); at = parent_of.find(at->second)) {
        const auto [seen, added] = walk_of.emplace(at->first, walk);
        if (added) continue;
        if (seen->second == walk)
          throw ParseError(urdf_file_, line_of_joint(joint_of.at(at->first)),
                           "the joints close a loop through link '" + detail::shown(at->first) + "': a URDF is a tree");
        break;  // met an earlier walk, which ended
      }
    }
  }

  int line_of_joint(const std::string& name) const {
    const auto it = joint_lines_.find(name);
    return it == joint_lines_.end() ? 0 : it->second;
  }
  int line_of_link(const std::string& name) const {
    const auto it = link_lines_.find(name);
    return it == link_lines_.end() ? 0 : it->second;
  }

  // Links in depth-first order from the root, each child joint (urdfdom's order, as MoveIt's) before
  // the link it moves.
  void add_subtree(const urdf::LinkConstSharedPtr& link, int parent_joint) {
    const int index = static_cast<int>(m_.links_.size());
    RobotLink l;
    l.name = link->name;
    l.parent_joint = parent_joint;
    for (const urdf::CollisionSharedPtr& c : link->collision_array)
      if (c && c->geometry) l.collision.push_back(collision_shape(*c, link->name));
    m_.links_.push_back(std::move(l));
    m_.link_by_name_[link->name] = index;
    if (parent_joint >= 0) m_.joints_[parent_joint].child_link = index;
    for (const urdf::JointSharedPtr& joint : link->child_joints) {
      const int j = add_joint(*joint, index);
      add_subtree(link_named(joint->child_link_name), j);
    }
  }

  urdf::LinkConstSharedPtr link_named(const std::string& name) const {
    const urdf::LinkConstSharedPtr link = urdf_links_->getLink(name);
    if (!link) throw ParseError(urdf_file_, line_of_link(name), "link '" + detail::shown(name) + "' is missing");
    return link;
  }

  int add_joint(const urdf::Joint& joint, int parent_link) {
    RobotJoint j;
    j.name = joint.name;
    j.parent_link = parent_link;
    j.origin = to_transform(joint.parent_to_joint_origin_transform);
    const int line = line_of_joint(joint.name);
    if (!is_finite(j.origin) || !within(j.origin.translation, kMaxLength))
      throw ParseError(urdf_file_, line, "joint '" + detail::shown(joint.name) + "' has an origin that is not finite or beyond " +
                                             std::to_string(int(kMaxLength)) + " m");
    double lower = 0, upper = 0;
    switch (joint.type) {
      case urdf::Joint::REVOLUTE: j.type = JointType::Revolute; break;
      case urdf::Joint::CONTINUOUS: j.type = JointType::Continuous; break;
      case urdf::Joint::PRISMATIC: j.type = JointType::Prismatic; break;
      case urdf::Joint::FIXED: j.type = JointType::Fixed; break;
      default:
        throw ParseError(urdf_file_, line,
                         "joint '" + detail::shown(joint.name) + "' is " + (joint.type == urdf::Joint::FLOATING ? "floating" :
                                                             joint.type == urdf::Joint::PLANAR ? "planar" : "of an unknown type") +
                             ": ompl_cuda takes revolute, continuous, prismatic and fixed joints");
    }
    if (j.type != JointType::Fixed) {
      const double n = std::sqrt(joint.axis.x * joint.axis.x + joint.axis.y * joint.axis.y + joint.axis.z * joint.axis.z);
      if (!(n > 0) || !std::isfinite(n))
        throw ParseError(urdf_file_, line, "joint '" + detail::shown(joint.name) + "' has no axis (a zero or non-finite vector)");
      j.axis[0] = joint.axis.x / n, j.axis[1] = joint.axis.y / n, j.axis[2] = joint.axis.z / n;
      if (j.type == JointType::Continuous) {
        lower = -M_PI, upper = M_PI;
      } else {
        if (!joint.limits) throw ParseError(urdf_file_, line, "joint '" + detail::shown(joint.name) + "' has no <limit>");
        lower = joint.limits->lower, upper = joint.limits->upper;
        if (!(lower <= upper) || !std::isfinite(lower) || !std::isfinite(upper))
          throw ParseError(urdf_file_, line, "joint '" + detail::shown(joint.name) + "' has limits that are not an interval of finite values");
        const bool angle = j.type == JointType::Revolute;
        if (!within(lower, angle ? kMaxAngle : kMaxLength) || !within(upper, angle ? kMaxAngle : kMaxLength))
          throw ParseError(urdf_file_, line, "joint '" + detail::shown(joint.name) + "' has limits beyond " +
                                                 (angle ? std::to_string(int(kMaxAngle)) + " rad" : std::to_string(int(kMaxLength)) + " m"));
      }
    }
    const int index = static_cast<int>(m_.joints_.size());
    if (j.type != JointType::Fixed && !joint.mimic) {
      j.variable = static_cast<int>(m_.variable_joint_.size());
      m_.variable_joint_.push_back(index);
      m_.lower_.push_back(lower);
      m_.upper_.push_back(upper);
    }
    m_.joints_.push_back(j);
    m_.joint_by_name_[joint.name] = index;
    return index;
  }

  void resolve_mimics(const urdf::ModelInterface& urdf) {
    for (RobotJoint& j : m_.joints_) {
      const urdf::JointConstSharedPtr joint = urdf.getJoint(j.name);
      if (!joint->mimic || j.type == JointType::Fixed) continue;
      const int line = line_of_joint(j.name);
      const int of = m_.joint_index(joint->mimic->joint_name);
      if (of < 0) throw ParseError(urdf_file_, line, "joint '" + detail::shown(j.name) + "' mimics '" + detail::shown(joint->mimic->joint_name) + "', which is not a joint");
      if (m_.joints_[of].variable < 0)
        throw ParseError(urdf_file_, line, "joint '" + detail::shown(j.name) + "' mimics '" + detail::shown(joint->mimic->joint_name) +
                                               "', which is fixed or a mimic itself (ompl_cuda takes a mimic of a moving joint)");
      j.mimic_of = of;
      j.mimic_multiplier = joint->mimic->multiplier;
      j.mimic_offset = joint->mimic->offset;
      // Its values over the mimicked joint's limits: a line, so its ends bound them.
      const int v = m_.joints_[of].variable;
      const double ends[2] = {j.mimic_multiplier * m_.lower_[v] + j.mimic_offset, j.mimic_multiplier * m_.upper_[v] + j.mimic_offset};
      const bool angle = j.type != JointType::Prismatic;
      if (!within(ends[0], angle ? kMaxAngle : kMaxLength) || !within(ends[1], angle ? kMaxAngle : kMaxLength))
        throw ParseError(urdf_file_, line, "joint '" + detail::shown(j.name) + "' mimics '" + detail::shown(joint->mimic->joint_name) +
                                               "' with values that are not finite or beyond " +
                                               (angle ? std::to_string(int(kMaxAngle)) + " rad" : std::to_string(int(kMaxLength)) + " m"));
    }
  }

  CollisionShape collision_shape(const urdf::Collision& c, const std::string& link) {
    CollisionShape s;
    s.origin = to_transform(c.origin);
    const int line = line_of_link(link);
    const urdf::Geometry& g = *c.geometry;
    switch (g.type) {
      case urdf::Geometry::BOX: {
        const auto& box = static_cast<const urdf::Box&>(g);
        s.kind = CollisionShape::Kind::Box;
        s.size[0] = box.dim.x, s.size[1] = box.dim.y, s.size[2] = box.dim.z;
        break;
      }
      case urdf::Geometry::CYLINDER: {
        const auto& cylinder = static_cast<const urdf::Cylinder&>(g);
        s.kind = CollisionShape::Kind::Cylinder;
        s.size[0] = cylinder.radius, s.size[1] = cylinder.length;
        break;
      }
      case urdf::Geometry::SPHERE:
        s.kind = CollisionShape::Kind::Sphere;
        s.size[0] = static_cast<const urdf::Sphere&>(g).radius;
        break;
      case urdf::Geometry::MESH: {
        const auto& mesh = static_cast<const urdf::Mesh&>(g);
        s.kind = CollisionShape::Kind::Mesh;
        std::string tried;
        s.mesh_file = detail::resolve_resource(mesh.filename, urdf_file_, package_path_, &tried);
        if (s.mesh_file.empty())
          throw ParseError(urdf_file_, line, "link '" + detail::shown(link) + "': mesh '" + detail::shown(mesh.filename) + "' not found (looked for " + detail::shown(tried, 400) + ")");
        s.mesh_scale[0] = mesh.scale.x, s.mesh_scale[1] = mesh.scale.y, s.mesh_scale[2] = mesh.scale.z;
        break;
      }
    }
    for (const double v : s.size)
      if (!within(v, kMaxLength) || v < 0)
        throw ParseError(urdf_file_, line, "link '" + detail::shown(link) + "': a collision shape of negative or non-finite size, or beyond " +
                                               std::to_string(int(kMaxLength)) + " m");
    if (!within(s.mesh_scale, kMaxLength))
      throw ParseError(urdf_file_, line, "link '" + detail::shown(link) + "': a mesh scale that is not finite or beyond " +
                                             std::to_string(int(kMaxLength)));
    if (!is_finite(s.origin) || !within(s.origin.translation, kMaxLength))
      throw ParseError(urdf_file_, line, "link '" + detail::shown(link) + "': a collision origin that is not finite or beyond " +
                                             std::to_string(int(kMaxLength)) + " m");
    return s;
  }

  static detail::KinematicJoint kinematic(const RobotJoint& j) {
    detail::KinematicJoint k{};
    for (int i = 0; i < 9; ++i) k.rotation[i] = j.origin.rotation[i];
    for (int i = 0; i < 3; ++i) k.translation[i] = j.origin.translation[i], k.axis[i] = j.axis[i];
    k.type = static_cast<int>(j.type);
    k.parent_link = j.parent_link;
    k.child_link = j.child_link;
    k.variable = j.variable;
    k.mimic_of = j.mimic_of;
    k.mimic_multiplier = j.mimic_multiplier;
    k.mimic_offset = j.mimic_offset;
    return k;
  }

  std::string required(const tinyxml2::XMLElement* e, const char* attribute) const {
    const char* value = e->Attribute(attribute);
    if (!value) throw ParseError(srdf_file_, e->GetLineNum(), std::string("<") + detail::shown(e->Name()) + "> needs a '" + attribute + "'");
    return value;
  }

  int link(const tinyxml2::XMLElement* e, const char* attribute) const {
    const std::string name = required(e, attribute);
    const int index = m_.link_index(name);
    if (index < 0)
      throw ParseError(srdf_file_, e->GetLineNum(), std::string("<") + detail::shown(e->Name()) + "> names link '" + detail::shown(name) + "', which the URDF does not have");
    return index;
  }

  // The joints of group `name` (its chains, joints, links' parent joints and subgroups).
  void collect_group(const std::map<std::string, const tinyxml2::XMLElement*>& groups, const std::string& name,
                     std::set<int>* joints, std::vector<std::string>* path) const {
    const tinyxml2::XMLElement* g = groups.at(name);
    if (std::find(path->begin(), path->end(), name) != path->end())
      throw ParseError(srdf_file_, g->GetLineNum(), "group '" + detail::shown(name) + "' contains itself");
    path->push_back(name);
    for (const tinyxml2::XMLElement* e = g->FirstChildElement(); e; e = e->NextSiblingElement()) {
      const std::string tag = e->Name();
      if (tag == "joint") {
        const std::string joint = required(e, "name");
        const int j = m_.joint_index(joint);
        if (j < 0)
          throw ParseError(srdf_file_, e->GetLineNum(), "group '" + detail::shown(name) + "' names joint '" + detail::shown(joint) + "', which the URDF does not have");
        joints->insert(j);
      } else if (tag == "link") {
        const int l = link(e, "name");
        if (m_.links_[l].parent_joint >= 0) joints->insert(m_.links_[l].parent_joint);
      } else if (tag == "chain") {
        const int base = link(e, "base_link"), tip = link(e, "tip_link");
        int at = tip;
        for (; at != base && m_.links_[at].parent_joint >= 0; at = m_.joints_[m_.links_[at].parent_joint].parent_link)
          joints->insert(m_.links_[at].parent_joint);
        if (at != base)
          throw ParseError(srdf_file_, e->GetLineNum(), "group '" + detail::shown(name) + "': link '" + detail::shown(m_.links_[base].name) +
                                                            "' is not an ancestor of '" + detail::shown(m_.links_[tip].name) + "'");
      } else if (tag == "group") {
        const std::string sub = required(e, "name");
        if (!groups.count(sub))
          throw ParseError(srdf_file_, e->GetLineNum(), "group '" + detail::shown(name) + "' names group '" + detail::shown(sub) + "', which the SRDF does not have");
        collect_group(groups, sub, joints, path);
      }
    }
    path->pop_back();
  }

  RobotModel& m_;
  std::vector<std::string> package_path_;
  std::string urdf_file_, srdf_file_;
  std::map<std::string, int> joint_lines_, link_lines_;
  const urdf::ModelInterface* urdf_links_ = nullptr;
};

RobotModel RobotModel::load(const std::string& urdf_file, const std::string& srdf_file,
                            const std::vector<std::string>& package_path) {
  RobotModel model;
  RobotModelReader reader(&model, package_path);
  reader.read_urdf(urdf_file);
  if (!srdf_file.empty()) reader.read_srdf(srdf_file);
  return model;
}

}  // namespace ompl_cuda
