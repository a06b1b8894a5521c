#include "ompl_cuda/chain_problem.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include <ompl/base/spaces/RealVectorStateSpace.h>

#include "linalg_cuda/errors.h"
#include "ompl_cuda/chain_motion_validator.h"
#include "ompl_cuda/chain_validity_checker.h"

namespace ompl_cuda {

namespace ob = ompl::base;
constexpr double kPi = 3.14159265358979323846;

ChainProblem paper_problem() {
  ChainProblem p;
  p.name = "paper";
  p.chain = PlanarChain::uniform(9, 1.0);
  p.workspace.rectangles = {{2.0, 1.0, 3.5, 4.0}, {-5.0, 2.5, -3.0, 3.5}, {-2.0, -6.0, 1.0, -4.5}, {4.5, -3.0, 6.0, 0.5}};
  p.start.assign(9, 0.0);
  p.start[0] = kPi / 2;
  p.goal.assign(9, 0.0);
  p.goal[0] = kPi - 0.14;
  return p;
}

ChainProblem horn_problem(int links) {
  ChainProblem p;
  p.name = "horn";
  p.chain = PlanarChain::uniform(links, 1.0 / links, true);
  p.workspace = horn_environment(links);
  p.start.assign(links, kPi / links);
  p.start[0] = 0.0;
  p.goal.assign(links, 0.0);
  p.goal[0] = kPi - 0.001;
  return p;
}

ChainProblem boxes_problem(int links, int boxes, std::uint32_t seed) {
  ChainProblem p;
  p.name = "boxes";
  p.chain = PlanarChain::uniform(links, 1.0);
  const double reach = links;
  p.workspace = random_boxes(boxes, -reach, -reach, reach, reach, 0.1 * reach / 9, 0.5 * reach / 9, 1.5, seed);
  // Keep start (straight up) and goal (straight left) free: drop boxes on either.
  auto blocks = [&](const Rectangle& r, double dx, double dy) {
    return !(r.x_max < std::min(0.0, dx * reach) - 0.05 || r.x_min > std::max(0.0, dx * reach) + 0.05 ||
             r.y_max < std::min(0.0, dy * reach) - 0.05 || r.y_min > std::max(0.0, dy * reach) + 0.05);
  };
  auto& rects = p.workspace.rectangles;
  rects.erase(std::remove_if(rects.begin(), rects.end(),
                             [&](const Rectangle& r) { return blocks(r, 0, 1) || blocks(r, -1, 0); }),
              rects.end());
  p.start.assign(links, 0.0);
  p.start[0] = kPi / 2;
  p.goal.assign(links, 0.0);
  p.goal[0] = kPi - 1e-3;
  return p;
}

ompl::geometric::SimpleSetupPtr make_simple_setup(const ChainProblem& problem, linalg_cuda::Backend backend,
                                                  bool our_motion_validator, double goal_threshold) {
  const int d = problem.chain.links();
  auto space = std::make_shared<ob::RealVectorStateSpace>(d);
  space->setBounds(-kPi, kPi);
  auto setup = std::make_shared<ompl::geometric::SimpleSetup>(space);
  const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
  setup->setStateValidityChecker(std::make_shared<ChainValidityChecker>(si, problem.chain, problem.workspace, backend));
  if (our_motion_validator)
    si->setMotionValidator(std::make_shared<ChainMotionValidator>(si, problem.chain, problem.workspace, backend));
  ob::ScopedState<> start(space), goal(space);
  for (int i = 0; i < d; ++i) {
    start[i] = problem.start[i];
    goal[i] = problem.goal[i];
  }
  setup->setStartAndGoalStates(start, goal, goal_threshold);
  return setup;
}

void write_svg(const ChainProblem& problem, const std::vector<std::vector<double>>& path, const std::string& file,
               int every) {
  double reach = 0.0;
  for (const double l : problem.chain.link_lengths) reach += l;
  const double extent = reach * 1.1, scale = 400.0 / extent;
  auto px = [&](double x) { return 450.0 + (x - problem.chain.base_x) * scale; };
  auto py = [&](double y) { return 450.0 - (y - problem.chain.base_y) * scale; };
  std::ofstream out(file);
  if (!out) throw linalg_cuda::Error("write_svg: cannot write '" + file + "'");
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='900' height='900' viewBox='0 0 900 900'>\n"
      << "<rect width='900' height='900' fill='white'/>\n";
  for (const Rectangle& r : problem.workspace.rectangles)
    out << "<rect x='" << px(r.x_min) << "' y='" << py(r.y_max) << "' width='" << (r.x_max - r.x_min) * scale
        << "' height='" << (r.y_max - r.y_min) * scale << "' fill='#455a64'/>\n";
  for (const Segment2D& s : problem.workspace.segments)
    out << "<line x1='" << px(s.x0) << "' y1='" << py(s.y0) << "' x2='" << px(s.x1) << "' y2='" << py(s.y1)
        << "' stroke='#455a64' stroke-width='3'/>\n";
  auto draw = [&](const std::vector<double>& q, const char* colour, double width, double opacity) {
    double angle = 0.0, x = problem.chain.base_x, y = problem.chain.base_y;
    out << "<polyline fill='none' stroke='" << colour << "' stroke-width='" << width << "' stroke-opacity='" << opacity
        << "' points='" << px(x) << "," << py(y);
    for (int i = 0; i < problem.chain.links(); ++i) {
      angle += q[i];
      x += std::cos(angle) * problem.chain.link_lengths[i];
      y += std::sin(angle) * problem.chain.link_lengths[i];
      out << " " << px(x) << "," << py(y);
    }
    out << "'/>\n";
  };
  for (std::size_t k = 0; k < path.size(); k += std::max(1, every)) draw(path[k], "#78909c", 1.5, 0.5);
  draw(problem.start, "#2e7d32", 3, 1);
  draw(problem.goal, "#c62828", 3, 1);
  out << "</svg>\n";
  if (!out) throw linalg_cuda::Error("write_svg: error writing '" + file + "'");
}

}  // namespace ompl_cuda
