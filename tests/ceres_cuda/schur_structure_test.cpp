// analyze_schur_structure: the e-blocks Ceres would eliminate (its ordering's group 0, or its
// independent set), the roles and tangent sizes of the blocks, the residuals without an e-block, the
// Summary's counts and "row,e,f" string, and the reasons it gives for problems it does not take.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "block_schur_math.h"
#include "general_problems.h"
#include "jacobian_cells.h"
#include "reduced_matrix_plan.h"
#include "schur_structure.h"

namespace {

using namespace ceres_cuda::detail;
using general_test::Shape;

int index_of(const SchurStructure& s, const double* user) {
  for (int b = 0; b < static_cast<int>(s.blocks.size()); ++b)
    if (s.blocks[b].user == user) return b;
  return -1;
}

// The structure of g with its points as the e-blocks (group 0 of the ordering), as the engines take it.
void analyze_with_points_as_e_blocks(general_test::GeneralProblem& g, SchurStructure* s) {
  ASSERT_EQ(analyze_schur_structure(general_test::options_for(g, ceres::ITERATIVE_SCHUR, ceres::JACOBI, 5, true),
                                    g.problem.get(), s),
            "");
}

TEST(SchurStructure, IndependentSetEliminatesThePointsOfSplitPoses) {
  const ceres_cuda::BALProblem scene = general_test::random_scene(6, 80, 3);
  Shape shape;
  shape.prior = general_test::Prior::Pose;
  shape.fix_k2 = true;
  general_test::GeneralProblem g = general_test::build(scene, shape);
  for (const bool ordered : {false, true}) {
    SCOPED_TRACE(ordered ? "ordering given" : "independent set");
    const ceres::Solver::Options options =
        general_test::options_for(g, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 5, ordered);
    SchurStructure s;
    ASSERT_EQ(analyze_schur_structure(options, g.problem.get(), &s), "");
    EXPECT_EQ(s.num_e_blocks, 80);
    EXPECT_EQ(s.num_f_blocks, 6 * 3);  // quaternion, translation, intrinsics per image
    for (const double* point : g.points) EXPECT_TRUE(s.is_e_block(index_of(s, point)));
    const int q = index_of(s, g.rotations[0]), k = index_of(s, g.intrinsics[0]);
    EXPECT_EQ(s.blocks[q].size, 4);
    EXPECT_EQ(s.blocks[q].tangent_size, 3);
    EXPECT_EQ(s.blocks[k].tangent_size, 2);  // k2 held by the SubsetManifold
    EXPECT_EQ(s.f_tangent_size, 6 * (3 + 3 + 2));
    EXPECT_EQ(s.num_effective_parameters, 6 * (3 + 3 + 2) + 80 * 3);
    EXPECT_EQ(s.num_parameters, 6 * (4 + 3 + 3) + 80 * 3);
    int priors = 0;
    for (const SchurResidual& r : s.residuals) priors += r.e_block < 0;
    EXPECT_EQ(priors, 6);
    EXPECT_EQ(detect_schur_sizes(s).to_string(), "2,3,d");  // the intrinsics' tangent size differs from the pose's
    EXPECT_EQ(detect_schur_sizes(s).specialization().to_string(), "2,3,d");
  }
}

TEST(SchurStructure, SharedIntrinsicsAndConstantBlocks) {
  const ceres_cuda::BALProblem scene = general_test::random_scene(5, 60, 4);
  Shape shape;
  shape.shared_intrinsics = true;
  shape.constant_poses = 2;
  shape.constant_point_stride = 7;
  general_test::GeneralProblem g = general_test::build(scene, shape);
  SchurStructure s;
  ASSERT_EQ(analyze_schur_structure(general_test::options_for(g, ceres::DENSE_SCHUR, ceres::JACOBI, 5, false),
                                    g.problem.get(), &s),
            "");
  EXPECT_EQ(s.num_f_blocks, 3 * 2 + 1);
  EXPECT_EQ(s.num_e_blocks, 60 - (60 + 6) / 7);
  EXPECT_FALSE(s.is_variable(index_of(s, g.rotations[0])));
  EXPECT_FALSE(s.is_variable(index_of(s, g.points[0])));
  EXPECT_EQ(detect_schur_sizes(s).to_string(), "2,3,3");
  EXPECT_EQ(detect_schur_sizes(s).specialization().to_string(), "2,3,3");
  EXPECT_EQ((SchurSizes{2, 1, 3}.specialization().to_string()), "2,d,d");
  EXPECT_EQ((SchurSizes{SchurSizes::kDynamic, 3, 3}.specialization().to_string()), "d,d,d");
  EXPECT_EQ((SchurSizes{4, 4, 7}.specialization().to_string()), "4,4,d");
  // The shared block's column holds every residual that varies somewhere.
  const JacobianCells cells(s);
  const int k = index_of(s, g.intrinsics[0]);
  EXPECT_EQ(cells.column_start[k + 1] - cells.column_start[k], static_cast<int>(s.residuals.size()));
  EXPECT_EQ(s.residuals.size() + s.fixed_residuals.size(), static_cast<std::size_t>(scene.num_observations()));
}

// JacobianCells' columns: each block's cells in residual order, and for the f-blocks also stably by
// e-block, whether the residuals came point after point (columns already in that order) or in the
// reverse order (the counting sorts).
TEST(JacobianCells, ColumnsInResidualAndEBlockOrder) {
  const ceres_cuda::BALProblem scene = general_test::random_scene(6, 90, 8);
  for (const bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "residuals in reverse order" : "residuals point after point");
    Shape shape;
    shape.shared_intrinsics = true;
    shape.prior = general_test::Prior::Translation;  // residuals without an e-block
    shape.reverse_order = reverse;
    general_test::GeneralProblem g = general_test::build(scene, shape);
    SchurStructure s;
    ASSERT_EQ(analyze_schur_structure(general_test::options_for(g, ceres::ITERATIVE_SCHUR, ceres::JACOBI, 5, true),
                                      g.problem.get(), &s),
              "");
    const JacobianCells cells(s);
    auto e_block_of = [&](int c) {
      const int r = cells.cells[c].residual;
      return cells.e_cell[r] < 0 ? -1 : cells.cells[cells.e_cell[r]].block;
    };
    long total = 0;
    for (int b = 0; b < s.num_variable_blocks(); ++b) {
      std::vector<int> expected;
      for (int c = 0; c < static_cast<int>(cells.cells.size()); ++c)
        if (cells.cells[c].block == b) expected.push_back(c);
      const std::vector<int> column(cells.column_cells.begin() + cells.column_start[b],
                                    cells.column_cells.begin() + cells.column_start[b + 1]);
      EXPECT_EQ(column, expected) << "block " << b;
      total += static_cast<long>(column.size());
      if (b >= s.num_f_blocks) continue;
      std::stable_sort(expected.begin(), expected.end(), [&](int x, int y) { return e_block_of(x) < e_block_of(y); });
      const std::vector<int> sorted(cells.e_sorted_cells.begin() + cells.column_start[b],
                                    cells.e_sorted_cells.begin() + cells.column_start[b + 1]);
      EXPECT_EQ(sorted, expected) << "f-block " << b;
    }
    EXPECT_EQ(total, static_cast<long>(cells.cells.size()));
  }
}

// ReducedMatrixPlan: per e-block the distinct f-blocks of its residuals in first-use order, their W's
// values one after the other; per f-block its slots in e-block order.
TEST(ReducedMatrixPlan, SlotsPerEBlockAndRowsPerFBlock) {
  const ceres_cuda::BALProblem scene = general_test::random_scene(6, 400, 17);
  Shape shape;
  shape.shared_intrinsics = true;
  shape.prior = general_test::Prior::Pose;
  general_test::GeneralProblem g = general_test::build(scene, shape);
  SchurStructure s;
  ASSERT_NO_FATAL_FAILURE(analyze_with_points_as_e_blocks(g, &s));
  const JacobianCells cells(s);
  const ReducedMatrixPlan plan(s, cells);
  ASSERT_EQ(plan.slot_start.size(), static_cast<std::size_t>(s.num_e_blocks + 1));
  long values = 0;
  std::vector<std::vector<int>> rows(s.num_f_blocks);
  for (int i = 0; i < s.num_e_blocks; ++i) {
    const int p = s.first_e_block() + i;
    std::vector<int> expected;
    for (int q = cells.column_start[p]; q < cells.column_start[p + 1]; ++q) {
      const int r = cells.cells[cells.column_cells[q]].residual;
      for (int c = cells.row_start[r]; c < cells.row_start[r + 1]; ++c) {
        const int j = cells.cells[c].block;
        if (j != p && std::find(expected.begin(), expected.end(), j) == expected.end()) expected.push_back(j);
      }
    }
    const std::vector<int> got(plan.slot_block.begin() + plan.slot_start[i],
                               plan.slot_block.begin() + plan.slot_start[i + 1]);
    EXPECT_EQ(got, expected) << "e-block " << p;
    for (int slot = plan.slot_start[i]; slot < plan.slot_start[i + 1]; ++slot) {
      EXPECT_EQ(plan.slot_e_block[slot], p);
      EXPECT_EQ(plan.slot_values[slot], values);
      values += static_cast<long>(s.blocks[plan.slot_block[slot]].tangent_size) * s.blocks[p].tangent_size;
      rows[plan.slot_block[slot]].push_back(slot);
    }
  }
  EXPECT_EQ(plan.num_values, values);
  for (int j = 0; j < s.num_f_blocks; ++j) {
    const std::vector<int> got(plan.row_slots.begin() + plan.row_start[j],
                               plan.row_slots.begin() + plan.row_start[j + 1]);
    EXPECT_EQ(got, rows[j]) << "f-block " << j;
  }
}

// ChunksBySize: every chunk once, in the group of its block's tangent size, in chunk order; and the
// lower triangle's entries of a block, each (j >= l) once.
TEST(ColumnChunks, GroupedByTangentSize) {
  const ceres_cuda::BALProblem scene = general_test::random_scene(5, 200, 13);
  Shape shape;
  shape.fix_k2 = true;                            // intrinsics of 2 tangent values, poses of 3
  shape.prior = general_test::Prior::Translation;  // residuals without an e-block
  general_test::GeneralProblem g = general_test::build(scene, shape);
  SchurStructure s;
  ASSERT_NO_FATAL_FAILURE(analyze_with_points_as_e_blocks(g, &s));
  const JacobianCells cells(s);
  const ColumnChunks chunks(cells, 0, s.num_f_blocks, 32, true);
  EXPECT_EQ(chunks.max_tangent, 3);
  const ChunksBySize groups(chunks, cells.tangent_size);
  ASSERT_EQ(groups.tangent, (std::vector<int>{2, 3}));
  ASSERT_EQ(groups.group_start.size(), 3u);
  std::vector<int> seen(chunks.size(), 0);
  for (int group = 0; group < groups.groups(); ++group)
    for (int i = groups.group_start[group]; i < groups.group_start[group + 1]; ++i) {
      const int k = groups.chunk[i];
      ++seen[k];
      EXPECT_EQ(cells.tangent_size[chunks.block[k]], groups.tangent[group]);
      if (i > groups.group_start[group]) EXPECT_LT(groups.chunk[i - 1], k);
    }
  EXPECT_EQ(seen, std::vector<int>(chunks.size(), 1));

  for (int t = 1; t <= kMaxFBlockTangentSize; ++t) {
    std::vector<int> entry(t * t, 0);
    for (int i = 0; i < lower_triangle_entries(t); ++i) {
      int j, l;
      lower_triangle_entry(i, &j, &l);
      ASSERT_TRUE(j >= l && l >= 0 && j < t) << i;
      ++entry[j * t + l];
    }
    for (int j = 0; j < t; ++j)
      for (int l = 0; l < t; ++l) EXPECT_EQ(entry[j * t + l], j >= l ? 1 : 0) << t << ": " << j << ", " << l;
  }
}

// FtfPairs: every two f-cells of a residual, as (the later block's cell, the earlier block's), once, under
// the pair of their blocks, in residual order, cut into chunks of at most kChunk.
TEST(FtfPairs, EveryPairOfFCellsOnceInResidualOrder) {
  const ceres_cuda::BALProblem scene = general_test::random_scene(5, 300, 21);
  Shape shape;
  shape.shared_intrinsics = true;  // pairs of a block with every image
  shape.mixed = true;              // a shared sensor offset: pairs of two shared blocks
  shape.prior = general_test::Prior::Pose;
  general_test::GeneralProblem g = general_test::build(scene, shape);
  SchurStructure s;
  ASSERT_NO_FATAL_FAILURE(analyze_with_points_as_e_blocks(g, &s));
  const JacobianCells cells(s);
  const FtfPairs pairs(s, cells);
  std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> expected;  // (j, k) -> (c, d) in residual order
  for (int r = 0; r < static_cast<int>(s.residuals.size()); ++r)
    for (int c = cells.row_start[r]; c < cells.row_start[r + 1]; ++c)
      for (int d = cells.row_start[r]; d < cells.row_start[r + 1]; ++d) {
        const int j = cells.cells[c].block, k = cells.cells[d].block;
        if (j < s.num_f_blocks && k < j) expected[{j, k}].push_back({c, d});
      }
  ASSERT_EQ(pairs.pair_j.size(), expected.size());
  bool long_pair = false;
  for (std::size_t i = 0; i < pairs.pair_j.size(); ++i) {
    const auto& want = expected[{pairs.pair_j[i], pairs.pair_k[i]}];
    std::vector<std::pair<int, int>> got;
    for (int q = pairs.pair_chunk_start[i]; q < pairs.pair_chunk_start[i + 1]; ++q) {
      EXPECT_EQ(pairs.chunk_pair[q], static_cast<int>(i));
      EXPECT_LE(pairs.chunk_position[q + 1] - pairs.chunk_position[q], FtfPairs::kChunk);
      for (int e = pairs.chunk_position[q]; e < pairs.chunk_position[q + 1]; ++e)
        got.push_back({pairs.entry_j[e], pairs.entry_k[e]});
    }
    EXPECT_EQ(got, want) << "pair " << pairs.pair_j[i] << ", " << pairs.pair_k[i];
    long_pair = long_pair || pairs.pair_chunk_start[i + 1] - pairs.pair_chunk_start[i] > 1;
  }
  EXPECT_TRUE(long_pair);  // the two shared blocks' pair spans chunks
}

TEST(SchurStructure, EBlocksOfOneAndFourValues) {
  const ceres_cuda::BALProblem scene = general_test::random_scene(4, 40, 5);
  for (const auto point : {general_test::PointKind::InverseDepth, general_test::PointKind::Homogeneous}) {
    Shape shape;
    shape.point = point;
    general_test::GeneralProblem g = general_test::build(scene, shape);
    SchurStructure s;
    ASSERT_EQ(analyze_schur_structure(general_test::options_for(g, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 5, true),
                                      g.problem.get(), &s),
              "");
    const SchurBlock& e = s.blocks[index_of(s, g.points[0])];
    EXPECT_EQ(e.tangent_size, point == general_test::PointKind::InverseDepth ? 1 : 3);
    EXPECT_EQ(e.size, point == general_test::PointKind::InverseDepth ? 1 : 4);
  }
}

struct Cost2 : ceres::SizedCostFunction<2, 3, 3> {
  bool Evaluate(double const* const* x, double* r, double** j) const override {
    r[0] = x[0][0] - x[1][0];
    r[1] = x[0][1] - x[1][1];
    if (j != nullptr)
      for (int b = 0; b < 2; ++b)
        if (j[b] != nullptr)
          for (int k = 0; k < 6; ++k) j[b][k] = (k % 3 == k / 3) ? (b == 0 ? 1.0 : -1.0) : 0.0;
    return true;
  }
};

// A block that most residuals share (intrinsics of one camera) has its degree counted on all threads
// at once (a long column): 6000 residuals on it and one of 100 blocks each. Its degree (100) puts it
// after the 100 blocks of degree 1 in Ceres' order, so they are eliminated and it is not; counted as
// less than its true degree, it would come first and be the only e-block.
TEST(SchurStructure, ABlockEveryResidualSharesIsNotEliminated) {
  ceres::Problem::Options problem_options;
  problem_options.cost_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  ceres::Problem problem(problem_options);
  Cost2 cost;
  std::vector<double> shared(3, 1.0), blocks(100 * 3, 2.0);
  for (int r = 0; r < 6000; ++r) problem.AddResidualBlock(&cost, nullptr, blocks.data() + 3 * (r % 100), shared.data());
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::SPARSE_SCHUR;
  SchurStructure s;
  ASSERT_EQ(analyze_schur_structure(options, &problem, &s), "");
  EXPECT_EQ(s.num_e_blocks, 100);
  EXPECT_FALSE(s.is_e_block(index_of(s, shared.data())));
}

// Residuals lie family after family: the library's cost functions with a loss the GPU has first (one
// family per model and loss object), then every other residual, each family in program order.
TEST(SchurStructure, ResidualsGroupedIntoFamilies) {
  const ceres_cuda::BALProblem scene = general_test::random_scene(5, 60, 9);
  Shape shape;
  shape.library_cost = true;
  shape.prior = general_test::Prior::Pose;  // AutoDiff priors, added first: they go to the Host family
  shape.loss = general_test::Loss::Huber;
  general_test::GeneralProblem g = general_test::build(scene, shape);
  // One more residual of the library's cost function, with a loss the kernels do not have.
  g.problem->AddResidualBlock(ceres_cuda::QuaternionSnavelyReprojectionError::Create(1.0, 2.0),
                              new ceres::ArctanLoss(1.0), g.rotations[0], g.translations[0], g.intrinsics[0],
                              g.points[0]);
  SchurStructure s;
  ASSERT_EQ(analyze_schur_structure(general_test::options_for(g, ceres::ITERATIVE_SCHUR, ceres::SCHUR_JACOBI, 5, true),
                                    g.problem.get(), &s),
            "");
  ASSERT_EQ(s.families.size(), 2u);
  const int observations = scene.num_observations(), priors = scene.num_cameras();
  EXPECT_EQ(s.families[0].model, CostModel::QuaternionSnavely);
  EXPECT_EQ(s.families[0].loss.kind, LossKind::Huber);
  EXPECT_EQ(s.families[0].first, 0);
  EXPECT_EQ(s.families[0].last, observations);
  EXPECT_EQ(s.families[1].model, CostModel::Host);
  EXPECT_EQ(s.families[1].first, observations);
  EXPECT_EQ(s.families[1].last, observations + priors + 1);
  EXPECT_EQ(static_cast<int>(s.residuals.size()), observations + priors + 1);
  for (int r = 0; r < static_cast<int>(s.residuals.size()); ++r)
    EXPECT_EQ(cost_model_of(s.residuals[r].cost) == CostModel::QuaternionSnavely &&
                  s.residuals[r].loss == s.families[0].user_loss,
              r < observations)
        << r;
  // Program order within a family: the priors (added first) lead the Host family, the Arctan one ends it.
  EXPECT_EQ(s.residuals[observations].size, 6);
  EXPECT_EQ(cost_model_of(s.residuals.back().cost), CostModel::QuaternionSnavely);
  EXPECT_EQ(first_host_residual(s.families, static_cast<int>(s.residuals.size())), observations);
}

TEST(SchurStructure, SaysWhyItDoesNotTakeAProblem) {
  double a[3] = {1, 2, 3}, b[3] = {4, 5, 6}, c[3] = {7, 8, 9};
  ceres::Problem problem;
  problem.AddResidualBlock(new Cost2, nullptr, a, b);
  problem.AddResidualBlock(new Cost2, nullptr, b, c);
  ceres::Solver::Options options = ba_test::ba_options();
  SchurStructure s;
  // Two e-blocks in one residual: the user's group 0 is not an independent set.
  options.linear_solver_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  options.linear_solver_ordering->AddElementToGroup(a, 0);
  options.linear_solver_ordering->AddElementToGroup(b, 0);
  options.linear_solver_ordering->AddElementToGroup(c, 1);
  EXPECT_NE(analyze_schur_structure(options, &problem, &s).find("two eliminated"), std::string::npos);
  // An ordering that leaves a block out.
  options.linear_solver_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  options.linear_solver_ordering->AddElementToGroup(a, 0);
  options.linear_solver_ordering->AddElementToGroup(b, 1);
  EXPECT_NE(analyze_schur_structure(options, &problem, &s).find("linear_solver_ordering has 2"), std::string::npos);
  // Without an ordering, Ceres' independent set: a and c (degree 1) before b (degree 2).
  options.linear_solver_ordering.reset();
  ASSERT_EQ(analyze_schur_structure(options, &problem, &s), "");
  EXPECT_EQ(s.num_e_blocks, 2);
  EXPECT_TRUE(s.is_e_block(index_of(s, a)));
  EXPECT_TRUE(s.is_e_block(index_of(s, c)));
  // Bounds, and solvers it does not run.
  problem.SetParameterUpperBound(b, 0, 10.0);
  EXPECT_NE(analyze_schur_structure(options, &problem, &s).find("bounds"), std::string::npos);
  options.linear_solver_type = ceres::SPARSE_NORMAL_CHOLESKY;
  EXPECT_NE(analyze_schur_structure(options, &problem, &s).find("linear_solver_type"), std::string::npos);
}

}  // namespace
