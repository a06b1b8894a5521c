// BALProblem reading (text and bzip2), writing, bad files, the synthetic generator, PLY output, and
// the built-in loss recognition the fast path relies on.
#include <bzlib.h>
#include <ceres/crs_matrix.h>
#include <ceres/loss_function.h>
#include <ceres/problem.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "ba_test_support.h"
#include "ceres_cuda/bal_problem.h"
#include "linalg_cuda/errors.h"
#include "robust_loss.h"

namespace {

using ceres_cuda::BALProblem;

std::string temp_file(const std::string& name, const std::string& contents) {
  const auto path = std::filesystem::temp_directory_path() / ("ceres_cuda_test_" + name);
  std::ofstream(path) << contents;
  return path.string();
}

TEST(BALProblem, ReadsTheSharedFiles) {
  const std::string small = ba_test::bal_path("problem-3-7-pre.txt");
  const std::string compressed = ba_test::bal_path("problem-16-22106-pre.txt.bz2");
  if (!std::filesystem::exists(small) || !std::filesystem::exists(compressed)) GTEST_SKIP() << "BAL files not found";
  const BALProblem a = BALProblem::read(small);
  EXPECT_EQ(a.num_cameras(), 3);
  EXPECT_EQ(a.num_points(), 7);
  EXPECT_EQ(a.num_observations(), 19);
  const BALProblem b = BALProblem::read(compressed);
  EXPECT_EQ(b.num_cameras(), 16);
  EXPECT_EQ(b.num_points(), 22106);
  EXPECT_EQ(b.num_observations(), 83718);
  EXPECT_NO_THROW(b.validate());
  // The data README's initial cost (Ceres' 1/2 sum of squares).
  BALProblem copy = b;
  auto problem = ba_test::make_problem(copy, false);
  double cost = 0;
  problem->Evaluate(ceres::Problem::EvaluateOptions(), &cost, nullptr, nullptr, nullptr);
  EXPECT_NEAR(cost, 4.185660e6, 1e2);
}

TEST(BALProblem, WriteThenReadGivesTheSameProblem) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 5;
  o.num_points = 50;
  const BALProblem p = ceres_cuda::make_synthetic_bal(o);
  const std::string path = temp_file("roundtrip.txt", "");
  p.write(path);
  const BALProblem q = BALProblem::read(path);
  EXPECT_EQ(q.camera_index(), p.camera_index());
  EXPECT_EQ(q.point_index(), p.point_index());
  EXPECT_EQ(q.observations(), p.observations());  // %.17g round-trips exactly
  EXPECT_EQ(q.cameras(), p.cameras());
  EXPECT_EQ(q.points(), p.points());
  const std::string ply = temp_file("cloud.ply", "");
  p.write_ply(ply);
  std::ifstream in(ply);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "ply");
}

void expect_parse_error(const std::string& contents, long line, const std::string& words) {
  const std::string path = temp_file("bad.txt", contents);
  try {
    BALProblem::read(path);
    ADD_FAILURE() << "no error for: " << contents;
  } catch (const linalg_cuda::ParseError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(BALProblem, BadFilesSayWhereAndWhat) {
  const std::string cams = "0 0 0 0 0 0 500 0 0\n", rest = cams + "1 2 3\n";
  // Long numbers, so that the header's promise fits the file's size and the reading finds the end.
  const std::string long_observation = "0 0 1.000000000000000 2.000000000000000\n";
  expect_parse_error("", 1, "ends before the number of cameras");
  expect_parse_error("1 1 1\n" + long_observation + cams, 4, "ends before a point coordinate");  // truncated
  expect_parse_error("1 1 1\n" + long_observation + "0 0 0\n", 4, "ends before a camera parameter");
  expect_parse_error("1 1 1\n0 0 1.0 2.0\n0 0 0\n", 1, "at least 32 bytes of values, but the file has 19");
  expect_parse_error("1 1 1\n0 3 1.0 2.0\n" + rest, 2, "point index 3 out of range");
  expect_parse_error("1 1 1\n-1 0 1.0 2.0\n" + rest, 2, "camera index -1 out of range");
  expect_parse_error("1 1 1\n0 0 nan 2.0\n" + rest, 2, "not finite");
  expect_parse_error("1 1 1\n0 0 1.0 abc\n" + rest, 2, "expected a number");
  expect_parse_error("1 1 1\n0 0 1.0 2.0\n" + cams + "1 2 3\n4\n", 5, "unexpected text");
  expect_parse_error("-1 1 1\n", 1, "header counts out of range");
  // Headers that promise more than the file holds fail before any memory is reserved (reserving what
  // these promise takes gigabytes or throws std::bad_alloc).
  expect_parse_error("1 1 2000000000\n0 0 1 2\n", 1, "2000000000 observations, at least");
  expect_parse_error("268435456 1 1\n", 1, "268435456 cameras");
  expect_parse_error("1 1073741824 1\n", 1, "1073741824 points");
  // The text ends at the file's size, not at a NUL byte.
  expect_parse_error(std::string("1 1 1\n0 0 1.0 2.0\n") + cams + "1 2 3\n" + std::string(1, '\0') + "junk", 5,
                     "a NUL byte after the last point");
  expect_parse_error(std::string("1 1 1\n0 0 1.0") + std::string(1, '\0') + " 2.0\n" + cams + "1 2 3\n", 2,
                     "a NUL byte where an observation's y was expected");
  EXPECT_THROW(BALProblem::read("/nonexistent/file.txt"), linalg_cuda::Error);
  // A bzip2 file cut short.
  const std::string compressed = ba_test::bal_path("problem-16-22106-pre.txt.bz2");
  if (std::filesystem::exists(compressed)) {
    std::ifstream in(compressed, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string cut = temp_file("cut.bz2", "");
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    EXPECT_THROW(BALProblem::read(cut), linalg_cuda::ParseError);
  }
}

// A bzip2 file that expands far beyond what BAL text compresses to (here 40 MB of spaces, a few KB
// on disk) is refused as it decompresses, before the text fills the memory.
TEST(BALProblem, Bzip2BombIsRefused) {
  std::string text(std::size_t(40) << 20, ' ');
  text.replace(0, 6, "1 1 1\n");
  std::string compressed(1 << 20, '\0');
  unsigned size = static_cast<unsigned>(compressed.size());
  const unsigned text_size = static_cast<unsigned>(text.size());
  ASSERT_EQ(BZ2_bzBuffToBuffCompress(compressed.data(), &size, text.data(), text_size, 9, 0, 0), BZ_OK);
  compressed.resize(size);
  const std::string path = temp_file("bomb.txt.bz2", "");
  std::ofstream(path, std::ios::binary) << compressed;
  try {
    BALProblem::read(path);
    ADD_FAILURE() << "no error";
  } catch (const linalg_cuda::ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("expands more than 50 times"), std::string::npos) << e.what();
  }
}

TEST(BALProblem, ConstructorValidates) {
  EXPECT_THROW(BALProblem(1, 1, {0}, {1}, {0, 0}, std::vector<double>(9, 0), std::vector<double>(3, 0)),
               linalg_cuda::InvalidArgument);
  EXPECT_THROW(BALProblem(1, 1, {0}, {0}, {NAN, 0}, std::vector<double>(9, 0), std::vector<double>(3, 0)),
               linalg_cuda::InvalidArgument);
  EXPECT_THROW(BALProblem(1, 1, {0}, {0}, {0}, std::vector<double>(9, 0), std::vector<double>(3, 0)),
               linalg_cuda::InvalidArgument);
}

// The AutoDiff cost function add_to offers is the same model as the library's analytic one: the same
// residuals and Jacobians at the problem's values.
TEST(BALProblem, AddToWithEitherCostGivesTheSameEvaluation) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 6;
  o.num_points = 40;
  o.seed = 3;
  ceres_cuda::BALProblem bal = ceres_cuda::make_synthetic_bal(o);
  std::vector<double> residuals[2];
  ceres::CRSMatrix jacobians[2];
  for (const auto cost : {ceres_cuda::BALProblem::Cost::Library, ceres_cuda::BALProblem::Cost::AutoDiff}) {
    ceres::Problem problem;
    bal.add_to(&problem, nullptr, cost);
    ASSERT_EQ(problem.NumResidualBlocks(), bal.num_observations());
    const int k = cost == ceres_cuda::BALProblem::Cost::AutoDiff;
    ASSERT_TRUE(problem.Evaluate(ceres::Problem::EvaluateOptions(), nullptr, &residuals[k], nullptr, &jacobians[k]));
  }
  ASSERT_EQ(residuals[0].size(), residuals[1].size());
  for (std::size_t i = 0; i < residuals[0].size(); ++i) EXPECT_NEAR(residuals[1][i], residuals[0][i], 1e-9);
  ASSERT_EQ(jacobians[0].values.size(), jacobians[1].values.size());
  for (std::size_t i = 0; i < jacobians[0].values.size(); ++i)
    EXPECT_NEAR(jacobians[1].values[i], jacobians[0].values[i], 1e-9 * (1.0 + std::fabs(jacobians[0].values[i])));
}

TEST(SyntheticBal, ShapeNoiseAndOutliers) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 20;
  o.num_points = 1000;
  o.observations_per_point = 5;
  o.outlier_fraction = 0.1;
  const BALProblem p = ceres_cuda::make_synthetic_bal(o);
  EXPECT_EQ(p.num_observations(), 5000);
  // Every point in front of every camera that sees it (P.z < 0 in BAL's convention): all finite.
  BALProblem copy = p;
  auto problem = ba_test::make_problem(copy, false);
  double cost = 0;
  ASSERT_TRUE(problem->Evaluate(ceres::Problem::EvaluateOptions(), &cost, nullptr, nullptr, nullptr));
  EXPECT_TRUE(std::isfinite(cost));
  EXPECT_GT(cost, 0);
  o.seed = 2;
  EXPECT_NE(ceres_cuda::make_synthetic_bal(o).points(), p.points());
  o.observations_per_point = 30;
  EXPECT_THROW(ceres_cuda::make_synthetic_bal(o), linalg_cuda::InvalidArgument);
}

TEST(SyntheticBal, ATotalOfObservationsIsSpreadOverThePoints) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 20;
  o.num_points = 1000;
  o.num_observations = 6437;  // 6 per point, 7 for the first 437
  const BALProblem p = ceres_cuda::make_synthetic_bal(o);
  ASSERT_EQ(p.num_observations(), 6437);
  std::vector<int> per_point(o.num_points, 0);
  for (const int j : p.point_index()) ++per_point[j];
  for (int j = 0; j < o.num_points; ++j) EXPECT_EQ(per_point[j], j < 437 ? 7 : 6) << "point " << j;
  // Each point's cameras distinct (a run of neighbouring cameras).
  for (int i = 1; i < p.num_observations(); ++i)
    if (p.point_index()[i] == p.point_index()[i - 1]) EXPECT_LT(p.camera_index()[i - 1], p.camera_index()[i]);
  o.num_observations = 1999;  // fewer than 2 per point
  EXPECT_THROW(ceres_cuda::make_synthetic_bal(o), linalg_cuda::InvalidArgument);
  o.num_observations = 20001;  // more than every camera for some points
  EXPECT_THROW(ceres_cuda::make_synthetic_bal(o), linalg_cuda::InvalidArgument);
}

TEST(BuiltinLoss, RecognisesCeresLossesAndTheirScale) {
  using ceres_cuda::detail::BuiltinLoss;
  using ceres_cuda::detail::LossKind;
  BuiltinLoss loss;
  for (const double a : {0.1, 1.0, 2.5, 100.0}) {
    ceres::HuberLoss huber(a);
    ASSERT_TRUE(ceres_cuda::detail::recognise_builtin_loss(&huber, &loss));
    EXPECT_EQ(loss.kind, LossKind::Huber);
    EXPECT_NEAR(loss.a, a, 1e-12 * a);
    ceres::CauchyLoss cauchy(a);
    ASSERT_TRUE(ceres_cuda::detail::recognise_builtin_loss(&cauchy, &loss));
    EXPECT_EQ(loss.kind, LossKind::Cauchy);
    EXPECT_NEAR(loss.a, a, 1e-12 * a);
    ceres::SoftLOneLoss soft(a);
    ASSERT_TRUE(ceres_cuda::detail::recognise_builtin_loss(&soft, &loss));
    EXPECT_EQ(loss.kind, LossKind::SoftL1);
    EXPECT_NEAR(loss.a, a, 1e-12 * a);
  }
  ceres::ArctanLoss arctan(1.0);
  EXPECT_FALSE(ceres_cuda::detail::recognise_builtin_loss(&arctan, &loss));
  ceres::ScaledLoss scaled(new ceres::HuberLoss(1.0), 2.0, ceres::TAKE_OWNERSHIP);
  EXPECT_FALSE(ceres_cuda::detail::recognise_builtin_loss(&scaled, &loss));
  EXPECT_TRUE(ceres_cuda::detail::recognise_builtin_loss(nullptr, &loss));
  EXPECT_EQ(loss.kind, LossKind::None);
}

}  // namespace
