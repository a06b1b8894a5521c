#pragma once
// Ready-made planning problems for a planar chain, a SimpleSetup that uses the GPU checkers (two
// lines of difference from plain OMPL), and an SVG drawing of a problem and a path.
#include <cstdint>
#include <string>
#include <vector>

#include <ompl/geometric/SimpleSetup.h>

#include "linalg_cuda/backend.h"
#include "ompl_cuda/planar_chain.h"
#include "ompl_cuda/workspace2d.h"

namespace ompl_cuda {

struct ChainProblem {
  std::string name;
  PlanarChain chain;
  Workspace2D workspace;
  std::vector<double> start, goal;  // joint angles
};

// The seed paper's setting: 9 unit links at the origin among four axis-aligned rectangles (the paper
// gives no coordinates; these make the base's quarter turn from straight up to straight left impossible
// without folding the chain). Start: straight up. Goal: pointing left, 8 degrees above the horizon.
ChainProblem paper_problem();
// OMPL's KinematicChain demo: d links of length 1/d through the horn, with self-collision; its start and goal.
ChainProblem horn_problem(int links);
// d unit links among `boxes` random boxes (none at the base); start straight up, goal straight left.
ChainProblem boxes_problem(int links, int boxes, std::uint32_t seed);

// A SimpleSetup on RealVectorStateSpace(d) with bounds [-pi, pi], with ChainValidityChecker and
// ChainMotionValidator on `backend` (or OMPL's DiscreteMotionValidator when `our_motion_validator` is
// false), and the problem's start and goal (goal tolerance `goal_threshold` in joint space).
ompl::geometric::SimpleSetupPtr make_simple_setup(const ChainProblem& problem, linalg_cuda::Backend backend,
                                                  bool our_motion_validator = true, double goal_threshold = 1e-3);

// An SVG of the workspace, the chain at start (green) and goal (red), and along `path` (grey), one
// configuration every `every` states. Throws linalg_cuda::Error if the file cannot be written.
void write_svg(const ChainProblem& problem, const std::vector<std::vector<double>>& path, const std::string& file,
               int every = 1);

}  // namespace ompl_cuda
