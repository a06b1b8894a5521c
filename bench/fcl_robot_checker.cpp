#include "fcl_robot_checker.h"

#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/geometry/shape/box.h>
#include <fcl/geometry/shape/capsule.h>
#include <fcl/geometry/shape/cylinder.h>
#include <fcl/geometry/shape/sphere.h>
#include <fcl/math/bv/OBBRSS.h>
#include <fcl/narrowphase/collision.h>
#include <ompl/base/SpaceInformation.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "collision_geometry.h"  // ompl_cuda's private mesh reader: the cover and FCL see the same triangles
#include "linalg_cuda/errors.h"

namespace ompl_cuda::bench {

namespace {

using Mesh = fcl::BVHModel<fcl::OBBRSSd>;

fcl::Transform3d to_fcl(const Transform& t) {
  fcl::Transform3d out = fcl::Transform3d::Identity();
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) out.linear()(i, j) = t.rotation[3 * i + j];
    out.translation()(i) = t.translation[i];
  }
  return out;
}

// A ball about the centre of the points' bounding box that holds every point grown by its radius: not
// the tightest ball, which the pre-test does not need.
struct BoundingBall {
  std::vector<std::pair<fcl::Vector3d, double>> points;
  void add(const fcl::Vector3d& p, double radius = 0) { points.emplace_back(p, radius); }
  void finish(fcl::Vector3d* center, double* radius) const {
    if (points.empty()) {
      center->setZero();
      *radius = -1;  // nothing to touch
      return;
    }
    fcl::Vector3d lo = points[0].first, hi = lo;
    for (const auto& [p, r] : points) {
      lo = lo.cwiseMin(p - fcl::Vector3d::Constant(r));
      hi = hi.cwiseMax(p + fcl::Vector3d::Constant(r));
    }
    *center = (lo + hi) / 2;
    *radius = 0;
    for (const auto& [p, r] : points) *radius = std::max(*radius, (p - *center).norm() + r);
  }
};

// A mesh's triangles in its own frame, scaled, as a BVH: origin left out so that links with the same
// file and scale (the Panda's two fingers) share one model. Null for a mesh without triangles, which
// FCL's BVH does not take and which touches nothing.
std::shared_ptr<Mesh> read_mesh(const CollisionShape& shape) {
  RobotLink link;
  link.collision.push_back(shape);
  link.collision.back().origin = Transform();
  const detail::LinkGeometry geometry = detail::link_geometry(link);
  std::vector<fcl::Vector3d> vertices;
  std::vector<fcl::Triangle> triangles;
  vertices.reserve(3 * geometry.triangles.size());
  for (const detail::Triangle& t : geometry.triangles) {
    const auto n = vertices.size();
    for (const detail::Vec3* v : {&t.a, &t.b, &t.c}) vertices.emplace_back((*v)[0], (*v)[1], (*v)[2]);
    triangles.emplace_back(n, n + 1, n + 2);
  }
  if (triangles.empty()) return nullptr;
  auto mesh = std::make_shared<Mesh>();
  mesh->beginModel(static_cast<int>(triangles.size()), static_cast<int>(vertices.size()));
  mesh->addSubModel(vertices, triangles);
  mesh->endModel();
  return mesh;
}

struct Part {
  std::shared_ptr<const fcl::CollisionGeometryd> shape;
  fcl::Transform3d offset;  // in the link's frame
};

struct LinkShapes {
  std::vector<Part> parts;
  fcl::Vector3d center;  // a ball around every part, in the link's frame
  double radius = -1;
};

struct Obstacle {
  std::shared_ptr<const fcl::CollisionGeometryd> shape;
  fcl::Transform3d pose;  // in the scene frame
  double radius = 0;      // of a ball about pose's translation that holds it
};

void add_link(const RobotLink& link, std::map<std::tuple<std::string, double, double, double>, std::shared_ptr<Mesh>>* meshes,
              LinkShapes* out) {
  BoundingBall ball;
  for (const CollisionShape& s : link.collision) {
    Part part;
    part.offset = to_fcl(s.origin);
    std::shared_ptr<fcl::CollisionGeometryd> shape;
    switch (s.kind) {
      case CollisionShape::Kind::Box: {
        shape = std::make_shared<fcl::Boxd>(s.size[0], s.size[1], s.size[2]);
        for (int k = 0; k < 8; ++k)
          ball.add(part.offset * fcl::Vector3d((k & 1 ? 0.5 : -0.5) * s.size[0], (k & 2 ? 0.5 : -0.5) * s.size[1],
                                                (k & 4 ? 0.5 : -0.5) * s.size[2]));
        break;
      }
      case CollisionShape::Kind::Cylinder: {  // size: radius, length along z, as FCL's Cylinder(radius, lz)
        shape = std::make_shared<fcl::Cylinderd>(s.size[0], s.size[1]);
        for (int k = 0; k < 8; ++k)
          ball.add(part.offset * fcl::Vector3d(k & 1 ? s.size[0] : -s.size[0], k & 2 ? s.size[0] : -s.size[0],
                                                (k & 4 ? 0.5 : -0.5) * s.size[1]));
        break;
      }
      case CollisionShape::Kind::Sphere:
        shape = std::make_shared<fcl::Sphered>(s.size[0]);
        ball.add(part.offset.translation(), s.size[0]);
        break;
      case CollisionShape::Kind::Mesh: {
        std::shared_ptr<Mesh>& mesh = (*meshes)[{s.mesh_file, s.mesh_scale[0], s.mesh_scale[1], s.mesh_scale[2]}];
        if (!mesh) mesh = read_mesh(s);
        if (!mesh) continue;  // no triangles
        shape = mesh;
        for (int v = 0; v < mesh->num_vertices; ++v) ball.add(part.offset * mesh->vertices[v]);
        break;
      }
    }
    shape->computeLocalAABB();
    part.shape = std::move(shape);
    out->parts.push_back(std::move(part));
  }
  ball.finish(&out->center, &out->radius);
}

void add_obstacle(const Primitive& p, Obstacle* out) {
  out->pose = to_fcl(p.pose);
  std::shared_ptr<fcl::CollisionGeometryd> shape;
  switch (p.kind) {
    case Primitive::Kind::Sphere:
      shape = std::make_shared<fcl::Sphered>(p.size[0]);
      out->radius = p.size[0];
      break;
    case Primitive::Kind::Box:
      shape = std::make_shared<fcl::Boxd>(p.size[0], p.size[1], p.size[2]);
      out->radius = std::hypot(p.size[0], p.size[1], p.size[2]) / 2;
      break;
    // Ours: radius, then the length of the axis (z); FCL's Cylinder(radius, lz) and Capsule(radius, lz)
    // likewise, the capsule's lz without its hemispheres, as ours.
    case Primitive::Kind::Cylinder:
      shape = std::make_shared<fcl::Cylinderd>(p.size[0], p.size[1]);
      out->radius = std::hypot(p.size[0], p.size[1] / 2);
      break;
    case Primitive::Kind::Capsule:
      shape = std::make_shared<fcl::Capsuled>(p.size[0], p.size[1]);
      out->radius = p.size[0] + p.size[1] / 2;
      break;
  }
  shape->computeLocalAABB();
  out->shape = std::move(shape);
}

// A scene mesh as MoveIt's FCL plugin takes it: its triangles as an OBBRSS BVH in the mesh's frame,
// placed at its pose. False for a mesh without triangles, which touches nothing.
bool add_mesh_obstacle(const SceneMesh& m, Obstacle* out) {
  if (m.triangles.empty()) return false;
  std::vector<fcl::Vector3d> vertices;
  std::vector<fcl::Triangle> triangles;
  vertices.reserve(m.vertices.size() / 3);
  triangles.reserve(m.num_triangles());
  out->radius = 0;
  for (std::size_t v = 0; v + 2 < m.vertices.size(); v += 3) {
    vertices.emplace_back(m.vertices[v], m.vertices[v + 1], m.vertices[v + 2]);
    out->radius = std::max(out->radius, vertices.back().norm());
  }
  for (std::size_t t = 0; t + 2 < m.triangles.size(); t += 3) triangles.emplace_back(m.triangles[t], m.triangles[t + 1], m.triangles[t + 2]);
  auto mesh = std::make_shared<Mesh>();
  mesh->beginModel(static_cast<int>(triangles.size()), static_cast<int>(vertices.size()));
  mesh->addSubModel(vertices, triangles);
  mesh->endModel();
  mesh->computeLocalAABB();
  out->shape = std::move(mesh);
  out->pose = to_fcl(m.pose);
  return true;
}

bool balls_apart(const fcl::Vector3d& a, double ra, const fcl::Vector3d& b, double rb) {
  return (a - b).squaredNorm() > (ra + rb) * (ra + rb);
}

bool collide(const Part& part, const fcl::Transform3d& link_pose, const fcl::CollisionGeometryd* other,
             const fcl::Transform3d& other_pose) {
  const fcl::CollisionRequestd request;  // one contact is enough; no contact points
  fcl::CollisionResultd result;
  fcl::collide(part.shape.get(), link_pose * part.offset, other, other_pose, request, result);
  return result.isCollision();
}

bool scene_contact(const std::vector<LinkShapes>& links, const std::vector<Obstacle>& obstacles,
                   const std::vector<fcl::Transform3d>& world) {
  for (const Obstacle& obstacle : obstacles)
    for (std::size_t l = 0; l < links.size(); ++l) {
      const LinkShapes& link = links[l];
      if (link.parts.empty() || balls_apart(world[l] * link.center, link.radius, obstacle.pose.translation(), obstacle.radius))
        continue;
      for (const Part& part : link.parts)
        if (collide(part, world[l], obstacle.shape.get(), obstacle.pose)) return true;
    }
  return false;
}

bool self_contact(const std::vector<LinkShapes>& links, const std::vector<std::pair<int, int>>& pairs,
                  const std::vector<fcl::Transform3d>& world) {
  for (const auto& [a, b] : pairs) {
    const LinkShapes &la = links[a], &lb = links[b];
    if (la.parts.empty() || lb.parts.empty() || balls_apart(world[a] * la.center, la.radius, world[b] * lb.center, lb.radius))
      continue;
    for (const Part& pa : la.parts)
      for (const Part& pb : lb.parts)
        if (collide(pa, world[a], pb.shape.get(), world[b] * pb.offset)) return true;
  }
  return false;
}

// Every link's pose in the scene frame as FCL takes it, in a per-thread buffer; false for a NaN value.
bool place_links(const RobotModel& model, const Transform& base, const double* full_state,
                 const std::vector<fcl::Transform3d>** world) {
  for (int v = 0; v < model.num_variables(); ++v)
    if (std::isnan(full_state[v])) return false;
  thread_local std::vector<Transform> poses;
  thread_local std::vector<fcl::Transform3d> placed;
  model.link_poses(full_state, &poses);
  placed.resize(poses.size());
  for (std::size_t l = 0; l < poses.size(); ++l) placed[l] = to_fcl(compose(base, poses[l]));
  *world = &placed;
  return true;
}

}  // namespace

struct FclRobotChecker::Geometry {
  std::vector<LinkShapes> links;  // RobotModel::links()' order
  std::vector<Obstacle> obstacles;
};

FclRobotChecker::FclRobotChecker(const RobotCollisionModel& robot, const Scene& scene, const Transform& base)
    : FclRobotChecker(robot.model(), robot.self_collision_pairs(), scene, base) {}

FclRobotChecker::FclRobotChecker(const RobotModel& model, std::vector<std::pair<int, int>> self_pairs, const Scene& scene,
                                 const Transform& base)
    : model_(model), self_pairs_(std::move(self_pairs)), base_(base), geometry_(std::make_unique<Geometry>()) {
  const int links = static_cast<int>(model_.links().size());
  for (const auto& [a, b] : self_pairs_)
    if (a < 0 || b < 0 || a >= links || b >= links || a == b)
      throw linalg_cuda::InvalidArgument("FclRobotChecker: the self pair (" + std::to_string(a) + ", " + std::to_string(b) +
                                         ") is not two links of the " + std::to_string(links));
  std::map<std::tuple<std::string, double, double, double>, std::shared_ptr<Mesh>> meshes;
  geometry_->links.resize(links);
  for (int l = 0; l < links; ++l) add_link(model_.links()[l], &meshes, &geometry_->links[l]);
  for (const SceneObject& object : scene.objects()) {
    for (const Primitive& p : object.primitives) {
      geometry_->obstacles.emplace_back();
      add_obstacle(p, &geometry_->obstacles.back());
    }
    for (const SceneMesh& m : object.meshes) {
      Obstacle obstacle;
      if (add_mesh_obstacle(m, &obstacle)) geometry_->obstacles.push_back(std::move(obstacle));
    }
  }
}

FclRobotChecker::~FclRobotChecker() = default;
FclRobotChecker::FclRobotChecker(FclRobotChecker&&) noexcept = default;
FclRobotChecker& FclRobotChecker::operator=(FclRobotChecker&&) noexcept = default;

bool FclRobotChecker::touches_scene(const double* full_state) const {
  const std::vector<fcl::Transform3d>* world = nullptr;
  return !place_links(model_, base_, full_state, &world) || scene_contact(geometry_->links, geometry_->obstacles, *world);
}

bool FclRobotChecker::touches_itself(const double* full_state) const {
  const std::vector<fcl::Transform3d>* world = nullptr;
  return !place_links(model_, base_, full_state, &world) || self_contact(geometry_->links, self_pairs_, *world);
}

bool FclRobotChecker::in_collision(const double* full_state, bool self_collision) const {
  const std::vector<fcl::Transform3d>* world = nullptr;
  if (!place_links(model_, base_, full_state, &world)) return true;
  return scene_contact(geometry_->links, geometry_->obstacles, *world) ||
         (self_collision && self_contact(geometry_->links, self_pairs_, *world));
}

FclValidityChecker::FclValidityChecker(const ompl::base::SpaceInformationPtr& si,
                                       std::shared_ptr<const FclRobotChecker> checker, PlanningGroup group,
                                       std::vector<double> held)
    : ompl::base::StateValidityChecker(si), checker_(std::move(checker)), group_(std::move(group)), held_(std::move(held)) {
  if (!si || !checker_) throw linalg_cuda::InvalidArgument("FclValidityChecker: the space information or checker is null");
  if (held_.empty()) held_ = checker_->model().default_state();
  if (static_cast<int>(held_.size()) != checker_->model().num_variables())
    throw linalg_cuda::InvalidArgument("FclValidityChecker: the held state has " + std::to_string(held_.size()) +
                                       " values, the robot " + std::to_string(checker_->model().num_variables()));
  const auto* space = dynamic_cast<const ompl::base::RealVectorStateSpace*>(si->getStateSpace().get());
  if (!space || space->getDimension() != group_.variables.size())
    throw linalg_cuda::InvalidArgument("FclValidityChecker: the space must be a RealVectorStateSpace of " +
                                       std::to_string(group_.variables.size()) + " values (group '" + group_.name + "')");
}

bool FclValidityChecker::isValid(const ompl::base::State* state) const {
  if (!si_->satisfiesBounds(state)) return false;
  const double* values = state->as<ompl::base::RealVectorStateSpace::StateType>()->values;
  thread_local std::vector<double> full;  // scratch: no allocation per state once grown
  full = held_;
  for (std::size_t k = 0; k < group_.variables.size(); ++k) full[group_.variables[k]] = values[k];
  return !checker_->in_collision(full.data());
}

}  // namespace ompl_cuda::bench
