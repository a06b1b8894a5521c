// BALProblem reading (text and bzip2; in blocks, from files and pipes, and the memory a read takes),
// writing, bad files, the synthetic generator, PLY output, and the built-in loss recognition the fast
// path relies on.
#include <bzlib.h>
#include <ceres/crs_matrix.h>
#include <ceres/loss_function.h>
#include <ceres/problem.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "ba_test_support.h"
#include "ceres_cuda/bal_problem.h"
#include "linalg_cuda/errors.h"
#include "peak_memory.h"
#include "robust_loss.h"

namespace {

using ceres_cuda::BALProblem;

// A file in the temp folder named after the test, so that tests that ctest runs in parallel do not
// share one.
std::string temp_file(const std::string& name, const std::string& contents) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto path = std::filesystem::temp_directory_path() /
                    ("ceres_cuda_test_" + std::string(test ? test->name() : "none") + "_" + name);
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

// ---------------------------------------------------------------------------------------------------
// Reading in blocks

std::string compressed_bzip2(const std::string& text, int block_size_100k = 9) {
  std::string compressed(text.size() + text.size() / 50 + 1024, '\0');
  unsigned size = static_cast<unsigned>(compressed.size());
  std::string copy = text;  // bzip2 takes a non-const pointer
  const int status = BZ2_bzBuffToBuffCompress(&compressed[0], &size, &copy[0], static_cast<unsigned>(copy.size()),
                                              block_size_100k, 0, 0);
  EXPECT_EQ(status, BZ_OK);
  compressed.resize(size);
  return compressed;
}

std::string binary_file(const std::string& name, const std::string& contents) {
  const std::string path = temp_file(name, "");
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

std::string text_of(const BALProblem& problem) {
  const std::string path = temp_file("text_of.txt", "");
  problem.write(path);
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void expect_same_problem(const BALProblem& expected, const BALProblem& actual) {
  EXPECT_EQ(actual.num_cameras(), expected.num_cameras());
  EXPECT_EQ(actual.num_points(), expected.num_points());
  EXPECT_EQ(actual.camera_index(), expected.camera_index());
  EXPECT_EQ(actual.point_index(), expected.point_index());
  EXPECT_EQ(actual.observations(), expected.observations());
  EXPECT_EQ(actual.cameras(), expected.cameras());
  EXPECT_EQ(actual.points(), expected.points());
}

// The file's text is read in 1 MiB blocks cut after whitespace. Padding the header's line moves the
// fields after it across the first block boundary one byte at a time, through the longest field
// (a 17-digit number with its sign and exponent): every field split at every place, in plain text and
// in bzip2 (whose text is cut at the same places). Newlines in the padding check the line count
// across the boundary.
TEST(BALProblem, FieldsSplitAcrossBlockBoundaries) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 3;
  o.num_points = 20;
  o.observations_per_point = 3;
  const BALProblem problem = ceres_cuda::make_synthetic_bal(o);
  const std::string text = text_of(problem);
  const std::size_t header_end = text.find('\n');
  const long lines = static_cast<long>(std::count(text.begin(), text.end(), '\n'));
  const std::size_t block = std::size_t(1) << 20;
  for (std::size_t shift = 0; shift < 40; ++shift) {
    SCOPED_TRACE("shift " + std::to_string(shift));
    // 1000 newlines, then spaces up to the boundary, less the shift: the first observation's fields
    // straddle the boundary.
    const std::size_t padding = block - header_end - shift;
    std::string padded = text.substr(0, header_end) + std::string(1000, '\n') + std::string(padding - 1000, ' ') +
                         text.substr(header_end);
    expect_same_problem(problem, BALProblem::read(binary_file("shifted.txt", padded)));
    if (shift % 4 == 0) {
      expect_same_problem(problem, BALProblem::read(binary_file("shifted.txt.bz2", compressed_bzip2(padded, 1))));
    }
    // One value too many: the error names the last line, past the boundary.
    expect_parse_error(padded + "4\n", lines + 1000 + 1, "unexpected text after the last point");
  }
  for (const char* name : {"shifted.txt", "shifted.txt.bz2", "bad.txt", "text_of.txt"})
    std::filesystem::remove(temp_file(name, ""));
}

// Errors inside the first block and beyond it, in plain text and in bzip2: the same error.
TEST(BALProblem, Bzip2AndPlainTextGiveTheSameErrors) {
  const std::string cams = "0 0 0 0 0 0 500 0 0\n";
  const std::string padding(std::size_t(3) << 20, ' ');  // beyond the first blocks
  for (const std::string& text : std::vector<std::string>{
           "1 1 1\n0 0 1.0 2.0\n0 0 0\n", "1 1 1\n0 0 1.0 2.0\n" + cams + "1 2 3\n4\n",
           "1 1 2000000000\n0 0 1 2\n", "1 1 1\n" + padding + "0 0 1.0 2.0\n" + cams + "1 2 x\n",
        "1 1 1\n0 0 1.0 2.0\n" + cams + "1 2 3\n" + padding + "junk\n",
        "1 1 100000000\n" + padding + "0 0 1.0 2.0\n" + cams + "1 2 3\n"}) {
    std::string plain_error, bzip2_error;
    try {
      BALProblem::read(binary_file("same_error.txt", text));
    } catch (const linalg_cuda::ParseError& e) {
      plain_error = std::string(e.what()).substr(e.file().size());
    }
    try {
      BALProblem::read(binary_file("same_error.txt.bz2", compressed_bzip2(text)));
    } catch (const linalg_cuda::ParseError& e) {
      bzip2_error = std::string(e.what()).substr(e.file().size());
    }
    EXPECT_FALSE(plain_error.empty());
    EXPECT_EQ(plain_error, bzip2_error);
  }
  for (const char* name : {"same_error.txt", "same_error.txt.bz2"}) std::filesystem::remove(temp_file(name, ""));
}

// A field longer than 1 MiB is no BAL value: refused before it is held whole.
TEST(BALProblem, FieldLongerThanOneMiB) {
  const std::string cams = "0 0 0 0 0 0 500 0 0\n";
  expect_parse_error("1 1 1\n0 0 1." + std::string(std::size_t(2) << 20, '0') + " 2.0\n" + cams + "1 2 3\n", 2,
                     "a field longer than 1 MiB");
  expect_parse_error("1 1 1\n0 0 1.0 2.0\n" + cams + "1 2 " + std::string(std::size_t(3) << 19, 'x') + "\n", 4,
                     "a field longer than 1 MiB");
  std::filesystem::remove(temp_file("bad.txt", ""));
}

// A pipe's size is not known before it is read: the reader reserves what the text it has read backs,
// and a header that promises more than the text holds fails with the file's message, once read.
std::string read_through_pipe(const std::string& contents, BALProblem* problem) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("ceres_cuda_test_pipe_" + std::to_string(getpid()))).string();
  std::filesystem::remove(path);
  if (mkfifo(path.c_str(), 0600) != 0) return "no fifo";
  std::signal(SIGPIPE, SIG_IGN);  // a reader that stops early must not end the test program
  std::thread writer([&] {
    const int fd = open(path.c_str(), O_WRONLY);
    for (std::size_t done = 0; fd >= 0 && done < contents.size();) {
      const ssize_t n = write(fd, contents.data() + done, contents.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (fd >= 0) close(fd);
  });
  std::string error;
  try {
    *problem = BALProblem::read(path);
  } catch (const linalg_cuda::ParseError& e) {
    error = std::string(e.what()).substr(e.file().size());
  }
  writer.join();
  std::filesystem::remove(path);
  return error;
}

TEST(BALProblem, ReadsFromAPipe) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 10;
  o.num_points = 30000;  // a text of several blocks
  const BALProblem problem = ceres_cuda::make_synthetic_bal(o);
  const std::string text = text_of(problem);
  ASSERT_GT(text.size(), std::size_t(3) << 20);
  BALProblem piped;
  ASSERT_EQ(read_through_pipe(text, &piped), "");
  expect_same_problem(problem, piped);
  BALProblem bzipped;
  ASSERT_EQ(read_through_pipe(compressed_bzip2(text), &bzipped), "");
  expect_same_problem(problem, bzipped);

  const std::string liar = "1 1 2000000000\n0 0 1 2\n";
  std::string file_error;
  try {
    BALProblem::read(binary_file("liar.txt", liar));
  } catch (const linalg_cuda::ParseError& e) {
    file_error = std::string(e.what()).substr(e.file().size());
  }
  BALProblem unused;
  EXPECT_EQ(read_through_pipe(liar, &unused), file_error);
  EXPECT_EQ(read_through_pipe(compressed_bzip2(liar), &unused), file_error);
  for (const char* name : {"liar.txt", "text_of.txt"}) std::filesystem::remove(temp_file(name, ""));
}

// The memory a read takes is the problem and a block of the text, not the text: a 48 MiB file of a
// small problem (its values padded with whitespace) is read with a few MiB; a bzip2 file of a real-
// sized problem with the problem's arrays and a few MiB (the block, bzip2's state), not its text.
TEST(BALProblem, MemoryOfAReadIsTheProblemNotTheFile) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = 20;
  o.num_points = 10000;
  const std::string text = text_of(ceres_cuda::make_synthetic_bal(o));
  std::string padded;
  padded.reserve(std::size_t(50) << 20);
  const std::string spaces(700, ' ');
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    padded.append(text, at, end + 1 - at);
    padded += spaces;
    at = end + 1;
  }
  const std::string plain = binary_file("padded.txt", padded);
  const std::size_t plain_bytes = padded.size();
  ASSERT_GT(plain_bytes, std::size_t(48) << 20);
  padded = std::string();
  const long long plain_growth = test_support::peak_memory_growth([&] { BALProblem::read(plain); });
  if (plain_growth < 0) GTEST_SKIP() << "peak memory cannot be measured here";
  std::cout << "reading a " << plain_bytes / 1048576.0 << " MiB text file grew the peak memory by "
            << plain_growth / 1048576.0 << " MiB\n";
  EXPECT_LT(plain_growth, 8LL << 20);

  o.num_cameras = 50;
  o.num_points = 60000;
  o.observations_per_point = 5;
  const BALProblem problem = ceres_cuda::make_synthetic_bal(o);
  const std::string big_text = text_of(problem);
  const std::string compressed = binary_file("big.txt.bz2", compressed_bzip2(big_text));
  const long long problem_bytes = static_cast<long long>(
      4 * (problem.camera_index().size() + problem.point_index().size()) +
      8 * (problem.observations().size() + problem.cameras().size() + problem.points().size()));
  const long long bzip2_growth = test_support::peak_memory_growth([&] { BALProblem::read(compressed); });
  std::cout << "reading a bzip2 file of " << big_text.size() / 1048576.0 << " MiB of text and a problem of "
            << problem_bytes / 1048576.0 << " MiB grew the peak memory by " << bzip2_growth / 1048576.0 << " MiB\n";
  EXPECT_LT(bzip2_growth, problem_bytes + (12LL << 20));
  EXPECT_GT(static_cast<long long>(big_text.size()), 12LL << 20);  // what reading the text whole would add
  for (const std::string& path : {plain, compressed, temp_file("text_of.txt", "")}) std::filesystem::remove(path);
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
  ceres::CauchyLoss before(1.0);
  ASSERT_TRUE(ceres_cuda::detail::recognise_builtin_loss(&before, &loss));
  ceres::TrivialLoss trivial;  // COLMAP's bundle adjustment passes it rather than null
  EXPECT_TRUE(ceres_cuda::detail::recognise_builtin_loss(&trivial, &loss));
  EXPECT_EQ(loss.kind, LossKind::None);
}

}  // namespace
