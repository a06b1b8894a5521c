#include "robot_check_data.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "cloud_field_build.h"
#include "mesh_voxels.h"
#include "linalg_cuda/errors.h"

namespace ompl_cuda::detail {

namespace {

double norm3(const double* v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

// Single-precision rounding of a point's coordinates computed from values of magnitude up to `reach`
// stays within a few units in the last place of reach per operation; sixteen of them, and a micrometre
// for the cover's own conversion, bound it for every sum and product a check makes.
float rounding_padding(double reach) { return static_cast<float>(16.0 * FLT_EPSILON * reach + 1e-6); }

// How far any sphere can be from the scene's origin: the base's offset, every joint's offset and
// prismatic travel, and the farthest sphere from its link's origin.
double robot_reach(const RobotCollisionModel& robot, const Transform& base) {
  const RobotModel& model = robot.model();
  double reach = norm3(base.translation);
  for (const RobotJoint& j : model.joints()) {
    reach += norm3(j.origin.translation);
    if (j.type != JointType::Prismatic) continue;
    const int source = j.mimic_of >= 0 ? model.joints()[j.mimic_of].variable : j.variable;
    const double travel = source >= 0 ? std::max(std::fabs(model.lower_bound(source)), std::fabs(model.upper_bound(source))) : 0.0;
    reach += j.mimic_of >= 0 ? std::fabs(j.mimic_multiplier) * travel + std::fabs(j.mimic_offset) : travel;
  }
  double farthest = 0;
  for (const std::vector<Sphere>& link : robot.spheres())
    for (const Sphere& s : link) farthest = std::max(farthest, norm3(s.center) + s.radius);
  return reach + farthest;
}

// A sphere around the spheres first .. last, in single precision: it holds every one of them grown by
// `padding`, with its own placement's rounding on top.
template <typename It>
CheckSphere bounding_sphere(It first, It last, float padding) {
  double centre[3] = {0, 0, 0}, radius = 0;
  const double n = static_cast<double>(last - first);
  for (It s = first; s != last; ++s)
    for (int i = 0; i < 3; ++i) centre[i] += s->center[i] / n;
  for (It s = first; s != last; ++s) {
    const double d[3] = {s->center[0] - centre[0], s->center[1] - centre[1], s->center[2] - centre[2]};
    radius = std::max(radius, norm3(d) + s->radius);
  }
  return {static_cast<float>(centre[0]), static_cast<float>(centre[1]), static_cast<float>(centre[2]),
          static_cast<float>(radius) + 3 * padding};
}

// The walk through the tree: joints depth first from the root, each child joint in the order given,
// the pose of a link kept where a joint other than the next one starts from it.
void plan_walk(const std::vector<KinematicJoint>& joints, int num_links, std::vector<KinematicStep>* steps, int* kept) {
  std::vector<std::vector<int>> children(num_links);
  for (int k = 0; k < static_cast<int>(joints.size()); ++k) children[joints[k].parent_link].push_back(k);
  std::vector<int> order, stack(children[0].rbegin(), children[0].rend());
  while (!stack.empty()) {
    const int k = stack.back();
    stack.pop_back();
    order.push_back(k);
    const std::vector<int>& next = children[joints[k].child_link];
    stack.insert(stack.end(), next.rbegin(), next.rend());
  }
  if (order.size() != joints.size())
    throw linalg_cuda::InvalidArgument("RobotCheckData: joints that the root link does not reach");
  std::vector<int> placed_by(num_links, -1), kept_at(num_links, -1);  // step index, kept index
  steps->clear();
  *kept = 0;
  for (int k : order) {
    const int parent = joints[k].parent_link, step = static_cast<int>(steps->size());
    int from = kFromRoot;
    if (parent != 0 && placed_by[parent] == step - 1) {
      from = kFromLast;
    } else if (parent != 0) {
      if (kept_at[parent] < 0) {
        kept_at[parent] = (*kept)++;
        (*steps)[placed_by[parent]].keep = kept_at[parent];
      }
      from = kept_at[parent];
    }
    placed_by[joints[k].child_link] = step;
    steps->push_back({k, from, -1});
  }
}

// The joints from the root down to `link`, in order.
std::vector<int> joints_down_to(const std::vector<KinematicJoint>& joints, int num_links, int link) {
  std::vector<int> parent_joint(num_links, -1), path;
  for (int k = 0; k < static_cast<int>(joints.size()); ++k) parent_joint[joints[k].child_link] = k;
  for (int l = link; parent_joint[l] >= 0; l = joints[parent_joint[l]].parent_link) path.push_back(parent_joint[l]);
  return {path.rbegin(), path.rend()};
}

// Neighbouring spheres in groups of at most kMaxGroupSpheres: halved at the median of their widest
// axis until small enough; emit(first, last) for each group.
constexpr std::ptrdiff_t kGroupSize = kMaxGroupSpheres;

template <typename It, typename Emit>
void split_into_groups(It first, It last, const Emit& emit) {
  if (last - first <= kGroupSize) {
    if (first != last) emit(first, last);
    return;
  }
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  for (It s = first; s != last; ++s)
    for (int i = 0; i < 3; ++i) lo[i] = std::min(lo[i], s->center[i]), hi[i] = std::max(hi[i], s->center[i]);
  int axis = 0;
  for (int i = 1; i < 3; ++i)
    if (hi[i] - lo[i] > hi[axis] - lo[axis]) axis = i;
  const It middle = first + (last - first) / 2;
  std::nth_element(first, middle, last, [axis](const Sphere& a, const Sphere& b) { return a.center[axis] < b.center[axis]; });
  split_into_groups(first, middle, emit);
  split_into_groups(middle, last, emit);
}

}  // namespace

RobotCheckData::RobotCheckData(const RobotCollisionModel& robot, const Transform& base, std::vector<int> group_values,
                               std::vector<double> held_state, std::vector<double> low_bounds,
                               std::vector<double> high_bounds, bool self_collision)
    : joints(robot.model().kinematic_joints()),
      group(std::move(group_values)),
      held(std::move(held_state)),
      low(std::move(low_bounds)),
      high(std::move(high_bounds)) {
  const RobotModel& model = robot.model();
  if (static_cast<int>(held.size()) != model.num_variables() || low.size() != group.size() || high.size() != group.size())
    throw linalg_cuda::InvalidArgument("RobotCheckData: the held state, the group and its bounds disagree in size");
  std::copy(base.rotation, base.rotation + 9, root);
  std::copy(base.translation, base.translation + 3, root + 9);
  padding_ = rounding_padding(robot_reach(robot, base));
  const double arm = robot_reach(robot, Transform());
  for (int i = 0; i < 3; ++i) {
    reach_low_[i] = base.translation[i] - arm;
    reach_high_[i] = base.translation[i] + arm;
  }
  first_group.push_back(0);
  first_sphere.push_back(0);
  for (const std::vector<Sphere>& link : robot.spheres()) {
    link_bounds.push_back(link.empty() ? CheckSphere{0, 0, 0, -1} : bounding_sphere(link.begin(), link.end(), padding_));
    std::vector<Sphere> sorted = link;
    split_into_groups(sorted.begin(), sorted.end(), [&](auto first, auto last) {
      group_bounds.push_back(bounding_sphere(first, last, padding_));
      for (auto s = first; s != last; ++s)
        spheres.push_back({static_cast<float>(s->center[0]), static_cast<float>(s->center[1]),
                           static_cast<float>(s->center[2]), static_cast<float>(s->radius) + padding_});
      first_sphere.push_back(static_cast<int>(spheres.size()));
    });
    first_group.push_back(static_cast<int>(group_bounds.size()));
  }
  const int num_links = static_cast<int>(link_bounds.size());
  plan_walk(joints, num_links, &steps, &num_kept);
  centre_slot.assign(num_links, -1);
  if (self_collision)
    for (const auto& [a, b] : robot.self_collision_pairs()) {
      self_pairs.insert(self_pairs.end(), {a, b});
      for (int l : {a, b})
        if (centre_slot[l] < 0 && link_bounds[l].r >= 0) centre_slot[l] = num_centres++;
      const bool spheres = link_bounds[a].r >= 0 && link_bounds[b].r >= 0;
      pair_bounds.push_back({spheres ? centre_slot[a] : -1, spheres ? centre_slot[b] : -1, link_bounds[a].r,
                             link_bounds[b].r});
      // The joints below the links' deepest common link, down to each.
      const std::vector<int> to_a = joints_down_to(joints, num_links, a), to_b = joints_down_to(joints, num_links, b);
      std::size_t common = 0;
      while (common < to_a.size() && common < to_b.size() && to_a[common] == to_b[common]) ++common;
      pair_paths.push_back({static_cast<int>(path_joints.size()), static_cast<int>(to_a.size() - common),
                            static_cast<int>(to_b.size() - common)});
      path_joints.insert(path_joints.end(), to_a.begin() + common, to_a.end());
      path_joints.insert(path_joints.end(), to_b.begin() + common, to_b.end());
    }
  // The grids' slack: four times what the spheres' padding covers of one test's rounding.
  self_tables = build_self_pair_tables(*this, 4.0 * padding_);
  for (std::size_t q = 0; q < self_tables.tables.size(); ++q)
    if (self_tables.tables[q].axes >= 0) gridded_pairs.push_back(static_cast<int>(q));
}

void RobotCheckData::set_scene(const Scene& scene, bool build_cloud) {
  // One field for the cloud and the meshes: its grid over what lies within reach, its points the
  // cloud's (those outside the grid mark nothing) and one in every voxel a triangle touches
  // (mesh_voxels.h). The cloud is copied whole: a plain copy costs less than sorting out the points in reach.
  const std::vector<double> triangles = scene_triangles(scene);
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  add_points_within(scene.point_cloud(), reach_low_, reach_high_, lo, hi);
  add_triangles_within(triangles, reach_low_, reach_high_, lo, hi);
  cloud_grid = plan_grid_over(lo, hi, scene.field_resolution());
  field_points.clear();
  cloud_distance2.clear();
  if (cloud_grid.voxels() > 0) {
    field_points = scene.point_cloud();
    append_triangle_voxels(triangles, cloud_grid, &field_points);
    if (build_cloud) cloud_distance2 = build_distance_field_cpu(field_points, cloud_grid);
  }
  primitives.clear();
  primitive_bounds.clear();
  for (const SceneObject& object : scene.objects())
    for (const Primitive& p : object.primitives) {
      CheckPrimitive<float> check;
      double rotation[9], translation[3];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) rotation[3 * i + j] = p.pose.rotation[3 * j + i];
      for (int i = 0; i < 3; ++i)
        translation[i] = -(rotation[3 * i] * p.pose.translation[0] + rotation[3 * i + 1] * p.pose.translation[1] +
                           rotation[3 * i + 2] * p.pose.translation[2]);
      std::copy(rotation, rotation + 9, check.rotation);
      std::copy(translation, translation + 3, check.translation);
      // A primitive far from the origin, or large, rounds on its own scale: it grows by that rounding.
      const double extent = norm3(p.pose.translation) + p.size[0] + p.size[1] + p.size[2];
      const float grow = rounding_padding(extent);
      switch (p.kind) {
        case Primitive::Kind::Sphere:
          check.size[0] = static_cast<float>(p.size[0]) + grow;
          break;
        case Primitive::Kind::Box:
          for (int i = 0; i < 3; ++i) check.size[i] = static_cast<float>(p.size[i]) + 2 * grow;
          break;
        case Primitive::Kind::Cylinder:
        case Primitive::Kind::Capsule:
          check.size[0] = static_cast<float>(p.size[0]) + grow;
          check.size[1] = static_cast<float>(p.size[1]) + 2 * grow;
          break;
      }
      check.kind = static_cast<int>(p.kind);
      primitives.push_back(check);
      // A sphere around the grown primitive for a first, cheaper test, grown by its own rounding.
      const double s0 = check.size[0], s1 = check.size[1], s2 = check.size[2];
      double radius = s0;
      if (p.kind == Primitive::Kind::Box) radius = std::sqrt(s0 * s0 + s1 * s1 + s2 * s2) / 2;
      if (p.kind == Primitive::Kind::Cylinder) radius = std::sqrt(s0 * s0 + s1 * s1 / 4);
      if (p.kind == Primitive::Kind::Capsule) radius = s0 + s1 / 2;
      primitive_bounds.push_back({static_cast<float>(p.pose.translation[0]), static_cast<float>(p.pose.translation[1]),
                                  static_cast<float>(p.pose.translation[2]), static_cast<float>(radius) + 2 * grow});
    }
}

RobotCheckView RobotCheckData::view() const {
  RobotCheckView v{};
  v.joints = joints.data();
  v.num_joints = static_cast<int>(joints.size());
  v.steps = steps.data();
  v.num_kept = num_kept;
  v.num_links = static_cast<int>(link_bounds.size());
  v.num_variables = static_cast<int>(held.size());
  std::copy(root, root + 12, v.root);
  v.dimension = static_cast<int>(group.size());
  v.group = group.data();
  v.held = held.data();
  v.low = low.data();
  v.high = high.data();
  v.link_bounds = link_bounds.data();
  v.first_group = first_group.data();
  v.group_bounds = group_bounds.data();
  v.first_sphere = first_sphere.data();
  v.spheres = spheres.data();
  v.self_pairs = self_pairs.data();
  v.num_self_pairs = static_cast<int>(self_pairs.size() / 2);
  v.self_tables = self_tables.tables.data();
  v.self_table_bits = self_tables.bits.data();
  v.gridded_pairs = gridded_pairs.data();
  v.num_gridded_pairs = static_cast<int>(gridded_pairs.size());
  v.pair_bounds = pair_bounds.data();
  v.pair_paths = pair_paths.data();
  v.path_joints = path_joints.data();
  v.centre_slot = centre_slot.data();
  v.num_centres = num_centres;
  v.primitives = primitives.data();
  v.primitive_bounds = primitive_bounds.data();
  v.num_primitives = static_cast<int>(primitives.size());
  v.cloud.grid = cloud_grid;
  v.cloud.distance2 = cloud_distance2.empty() ? nullptr : cloud_distance2.data();
  return v;
}

RobotCheckData whole_robot_check_data(const RobotCollisionModel& robot, const Transform& base, bool self_collision) {
  const int n = robot.model().num_variables();
  std::vector<int> all(n);
  for (int k = 0; k < n; ++k) all[k] = k;
  const double inf = std::numeric_limits<double>::infinity();
  return RobotCheckData(robot, base, std::move(all), std::vector<double>(n, 0.0), std::vector<double>(n, -inf),
                        std::vector<double>(n, inf), self_collision);
}

}  // namespace ompl_cuda::detail
