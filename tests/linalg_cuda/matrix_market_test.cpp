// Matrix Market reader/writer: the SuiteSparse test matrices, write/read round trips, one test per
// kind of malformed input, each checking that the error names the offending line; reading in blocks
// (every block boundary, streams that cannot seek, the memory a read takes); and the readers' rethrow
// of allocation failures with the file's name.
#include "linalg_cuda/matrix_market.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/file_errors.h"
#include "matrix_market_blocks.h"
#include "peak_memory.h"
#include "test_support.h"

namespace linalg_cuda {
namespace {

namespace fs = std::filesystem;

// A file in the temp folder that removes itself; names are unique per process and test so that
// parallel ctest runs do not trample each other.
class TempFile {
 public:
  explicit TempFile(const std::string& content = "") {
    static std::atomic<int> counter{0};
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::random_device entropy;
    path_ = fs::temp_directory_path() /
            ("linalg_cuda_mm_" + std::string(test ? test->name() : "none") + "_" + std::to_string(entropy()) + "_" +
             std::to_string(counter++) + ".mtx");
    std::ofstream out(path_, std::ios::binary);
    out << content;
  }
  ~TempFile() {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

// Parses CONTENT from a real file and returns the ParseError it must raise.
ParseError parse_error_of(const std::string& content) {
  TempFile file(content);
  try {
    read_matrix_market(file.path());
  } catch (const ParseError& error) {
    return error;
  }
  ADD_FAILURE() << "no ParseError for:\n" << content;
  return ParseError(file.path(), -1, "no error");
}

#define EXPECT_PARSE_ERROR(content, expected_line, expected_text)                         \
  do {                                                                                    \
    const ParseError error = parse_error_of(content);                                     \
    EXPECT_EQ(error.line(), expected_line) << error.what();                               \
    EXPECT_NE(std::string(error.what()).find(expected_text), std::string::npos)           \
        << "message '" << error.what() << "' lacks '" << expected_text << "'";            \
  } while (0)

void expect_identical(const CsrMatrix& expected, const CsrMatrix& actual) {
  ASSERT_EQ(expected.rows(), actual.rows());
  ASSERT_EQ(expected.cols(), actual.cols());
  ASSERT_EQ(expected.nonZeros(), actual.nonZeros());
  ASSERT_TRUE(actual.isCompressed());
  for (int i = 0; i <= expected.rows(); ++i) ASSERT_EQ(expected.outerIndexPtr()[i], actual.outerIndexPtr()[i]);
  for (int k = 0; k < expected.nonZeros(); ++k) {
    ASSERT_EQ(expected.innerIndexPtr()[k], actual.innerIndexPtr()[k]) << "entry " << k;
    ASSERT_EQ(expected.valuePtr()[k], actual.valuePtr()[k]) << "entry " << k;
  }
}

bool exactly_symmetric(const CsrMatrix& a) {
  CsrMatrix transposed = a.transpose();
  transposed.makeCompressed();
  if (transposed.nonZeros() != a.nonZeros()) return false;
  const CsrMatrix difference = a - transposed;
  for (int k = 0; k < difference.nonZeros(); ++k) {
    if (difference.valuePtr()[k] != 0.0) return false;
  }
  return true;
}

// Entries with random sign and magnitudes over many decades, so that the 17-digit output is exercised.
CsrMatrix random_sparse(int rows, int cols, int entries, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> row(0, rows - 1), col(0, cols - 1), exponent(-30, 30);
  std::uniform_real_distribution<double> mantissa(0.1, 1.0);
  std::vector<Eigen::Triplet<double, int>> triplets;
  for (int k = 0; k < entries; ++k) {
    const double sign = (rng() & 1) ? 1.0 : -1.0;
    triplets.emplace_back(row(rng), col(rng), sign * mantissa(rng) * std::pow(10.0, exponent(rng)));
  }
  CsrMatrix a(rows, cols);
  a.setFromTriplets(triplets.begin(), triplets.end());
  a.makeCompressed();
  return a;
}

// ---------------------------------------------------------------------------------------------------
// Real matrices

struct RealMatrixCase {
  const char* file;
  int n;
};

class RealMatrixTest : public ::testing::TestWithParam<RealMatrixCase> {};

TEST_P(RealMatrixTest, ReadsSymmetricFileAndExpandsBothTriangles) {
  const fs::path path = test_support::data_dir() / "matrices" / GetParam().file;
  if (!fs::exists(path)) {
    GTEST_SKIP() << "test matrix " << path << " not found; set CUDA_SOLVERS_DATA to the folder holding matrices/";
  }
  const CsrMatrix a = read_matrix_market(path.string());
  EXPECT_EQ(a.rows(), GetParam().n);
  EXPECT_EQ(a.cols(), GetParam().n);
  EXPECT_TRUE(a.isCompressed());
  EXPECT_TRUE(exactly_symmetric(a));

  // Reference read with plain iostreams: every stored entry must appear (mirrored) with its exact value.
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
  }
  std::istringstream size_line(line);
  long rows = 0, cols = 0, stored = 0;
  size_line >> rows >> cols >> stored;
  long diagonal = 0;
  for (long k = 0; k < stored; ++k) {
    int i = 0, j = 0;
    double value = 0;
    ASSERT_TRUE(in >> i >> j >> value);
    if (i == j) ++diagonal;
    EXPECT_EQ(a.coeff(i - 1, j - 1), value) << "(" << i << ", " << j << ")";
    EXPECT_EQ(a.coeff(j - 1, i - 1), value) << "(" << j << ", " << i << ")";
  }
  EXPECT_EQ(a.nonZeros(), 2 * stored - diagonal);
}

INSTANTIATE_TEST_SUITE_P(SuiteSparse, RealMatrixTest,
                         ::testing::Values(RealMatrixCase{"494_bus.mtx", 494}, RealMatrixCase{"1138_bus.mtx", 1138},
                                           RealMatrixCase{"nos6.mtx", 675}, RealMatrixCase{"isai_spd.mtx", 100}),
                         [](const ::testing::TestParamInfo<RealMatrixCase>& info) {
                           std::string name = info.param.file;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// ---------------------------------------------------------------------------------------------------
// Round trips

TEST(MatrixMarketRoundTrip, GeneralMatrixIsReproducedExactly) {
  const CsrMatrix a = random_sparse(37, 53, 400, 7);
  TempFile file;
  write_matrix_market(file.path(), a);
  expect_identical(a, read_matrix_market(file.path()));
}

TEST(MatrixMarketRoundTrip, SymmetricMatrixIsReproducedExactly) {
  const CsrMatrix b = random_sparse(61, 61, 500, 11);
  CsrMatrix a = b + CsrMatrix(b.transpose());
  a.makeCompressed();
  TempFile file;
  write_matrix_market(file.path(), a, /*symmetric=*/true);

  std::ifstream in(file.path());
  std::string banner;
  std::getline(in, banner);
  EXPECT_EQ(banner, "%%MatrixMarket matrix coordinate real symmetric");
  expect_identical(a, read_matrix_market(file.path()));
}

TEST(MatrixMarketRoundTrip, EmptyMatrix) {
  const CsrMatrix a(4, 2);
  TempFile file;
  write_matrix_market(file.path(), a);
  expect_identical(a, read_matrix_market(file.path()));
}

TEST(MatrixMarketWrite, AsymmetricMatrixCannotBeWrittenAsSymmetric) {
  TempFile file;
  EXPECT_THROW(write_matrix_market(file.path(), random_sparse(5, 5, 10, 3), true), InvalidArgument);
  EXPECT_THROW(write_matrix_market(file.path(), random_sparse(5, 6, 10, 3), true), InvalidArgument);
}

TEST(MatrixMarketWrite, UnwritablePathThrows) {
  const fs::path path = fs::temp_directory_path() / "linalg_cuda_no_such_folder_" / "sub" / "a.mtx";
  EXPECT_THROW(write_matrix_market(path.string(), random_sparse(3, 3, 3, 1)), Error);
}

// ---------------------------------------------------------------------------------------------------
// Accepted variations

TEST(MatrixMarketRead, PatternFieldGivesOnesAndSumsDuplicatesAndSkipsComments) {
  TempFile file(
      "%%MatrixMarket MATRIX Coordinate Pattern General\n"
      "% a comment\n"
      "\n"
      "   \n"
      "2 3 3\n"
      "1 1\n"
      "\n"
      "% comment between entries\n"
      "2 3\n"
      "1 1\n");
  const CsrMatrix a = read_matrix_market(file.path());
  EXPECT_EQ(a.rows(), 2);
  EXPECT_EQ(a.cols(), 3);
  EXPECT_EQ(a.nonZeros(), 2);
  EXPECT_EQ(a.coeff(0, 0), 2.0);
  EXPECT_EQ(a.coeff(1, 2), 1.0);
}

TEST(MatrixMarketRead, IntegerSymmetricFieldAndDuplicatesAreSummed) {
  std::istringstream in(
      "%%MatrixMarket matrix coordinate integer symmetric\n"
      "3 3 4\n"
      "1 1 4\n"
      "3 1 -2\n"
      "3 1 5\n"
      "2 2 +7\n");
  const CsrMatrix a = read_matrix_market(in, "ints");
  EXPECT_EQ(a.nonZeros(), 4);
  EXPECT_EQ(a.coeff(0, 0), 4.0);
  EXPECT_EQ(a.coeff(2, 0), 3.0);
  EXPECT_EQ(a.coeff(0, 2), 3.0);
  EXPECT_EQ(a.coeff(1, 1), 7.0);
}

TEST(MatrixMarketRead, WindowsLineEndingsAndMissingFinalNewline) {
  std::istringstream in("%%MatrixMarket matrix coordinate real general\r\n2 2 2\r\n1 2 1.5e0\r\n2 1 -.25");
  const CsrMatrix a = read_matrix_market(in, "crlf");
  EXPECT_EQ(a.coeff(0, 1), 1.5);
  EXPECT_EQ(a.coeff(1, 0), -0.25);
}

TEST(MatrixMarketRead, StreamErrorsNameTheStream) {
  std::istringstream in("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n");
  try {
    read_matrix_market(in, "my-stream");
    FAIL() << "expected ParseError";
  } catch (const ParseError& error) {
    EXPECT_EQ(error.file(), "my-stream");
    EXPECT_EQ(error.line(), 3);
    EXPECT_EQ(std::string(error.what()).rfind("my-stream:3: ", 0), 0u) << error.what();
  }
}

// ---------------------------------------------------------------------------------------------------
// Malformed input

const std::string kGeneral = "%%MatrixMarket matrix coordinate real general\n";
const std::string kSymmetric = "%%MatrixMarket matrix coordinate real symmetric\n";

TEST(MatrixMarketMalformed, FileNotFound) {
  const std::string path = (fs::temp_directory_path() / "linalg_cuda_definitely_missing.mtx").string();
  try {
    read_matrix_market(path);
    FAIL() << "expected ParseError";
  } catch (const ParseError& error) {
    EXPECT_EQ(error.line(), 0);
    EXPECT_EQ(error.file(), path);
  }
}

TEST(MatrixMarketMalformed, EmptyFile) { EXPECT_PARSE_ERROR("", 1, "empty file"); }

TEST(MatrixMarketMalformed, MissingBanner) {
  EXPECT_PARSE_ERROR("3 3 1\n1 1 1\n", 1, "missing Matrix Market banner");
  EXPECT_PARSE_ERROR("% just a comment\n3 3 1\n1 1 1\n", 1, "missing Matrix Market banner");
}

TEST(MatrixMarketMalformed, BadBanner) {
  EXPECT_PARSE_ERROR("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "banner must have 5 words");
  EXPECT_PARSE_ERROR("%%MatrixMarket vector coordinate real general\n1 1 0\n", 1, "invalid object");
  EXPECT_PARSE_ERROR("%%MatrixMarket matrix coordinates real general\n1 1 0\n", 1, "invalid format");
  EXPECT_PARSE_ERROR("%%MatrixMarket matrix coordinate double general\n1 1 0\n", 1, "invalid field");
  EXPECT_PARSE_ERROR("%%MatrixMarket matrix coordinate real lower\n1 1 0\n", 1, "invalid symmetry");
}

TEST(MatrixMarketMalformed, ArrayFormatIsUnsupported) {
  EXPECT_PARSE_ERROR("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, "unsupported format");
}

TEST(MatrixMarketMalformed, ComplexAndHermitianAndSkewAreUnsupported) {
  EXPECT_PARSE_ERROR("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1,
                     "unsupported field");
  EXPECT_PARSE_ERROR("%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", 1, "unsupported symmetry");
  EXPECT_PARSE_ERROR("%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n", 1, "unsupported symmetry");
}

TEST(MatrixMarketMalformed, BadSizeLine) {
  EXPECT_PARSE_ERROR(kGeneral + "% comment\n3 3\n", 3, "line ends before the entry count");
  EXPECT_PARSE_ERROR(kGeneral + "3 x 1\n1 1 1\n", 2, "column count");
  EXPECT_PARSE_ERROR(kGeneral + "-1 3 0\n", 2, "non-negative");
  EXPECT_PARSE_ERROR(kGeneral + "3 3 1 7\n1 1 1\n", 2, "trailing text '7'");
  EXPECT_PARSE_ERROR(kGeneral + "3.0 3 1\n1 1 1\n", 2, "row count");
  EXPECT_PARSE_ERROR(kGeneral + "% only comments\n\n", 3, "file ended before the size line");
}

// Dimensions that the entries cannot back fail at the size line, before any memory is reserved: the
// assembly of a 60-byte file declaring 2e9 rows would take tens of GB.
TEST(MatrixMarketMalformed, DimensionsFarBeyondTheEntries) {
  EXPECT_PARSE_ERROR(kGeneral + "2000000000 2000000000 1\n1 1 1\n", 2, "is mostly empty");
  EXPECT_PARSE_ERROR(kGeneral + "2147483647 1 1\n1 1 1\n", 2, "at most 1048640 rows and columns");
  EXPECT_PARSE_ERROR(kGeneral + "3 3 2000000000\n1 1 1\n", 3, "file ended after 1 of 2000000000 entries");
  TempFile tall(kGeneral + "1048576 1 1\n1 1 1\n");  // 2^20 rows with one entry: allowed
  EXPECT_EQ(read_matrix_market(tall.path()).rows(), 1048576);
}

// Readers' failures other than the typed errors reach the caller as linalg_cuda::Error naming the
// file; the typed errors (ParseError here) pass unchanged.
TEST(FileErrors, AllocationAndLengthFailuresNameTheFile) {
  const auto rethrown = [](auto&& error) -> std::string {
    try {
      try {
        throw error;
      } catch (...) {
        linalg_cuda::detail::rethrow_with_file_context("some.mtx");
      }
    } catch (const linalg_cuda::Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(rethrown(std::bad_alloc()), "some.mtx: not enough memory to read it");
  EXPECT_EQ(rethrown(std::length_error("vector::reserve")), "some.mtx: too large to read (vector::reserve)");
  EXPECT_EQ(rethrown(ParseError("some.mtx", 3, "bad")), "some.mtx:3: bad");
}

TEST(MatrixMarketMalformed, DirectoryIsNotAFile) {
  const std::string path = fs::temp_directory_path().string();
  try {
    read_matrix_market(path);
    FAIL() << "expected ParseError";
  } catch (const ParseError& error) {
    EXPECT_EQ(error.file(), path);
    EXPECT_NE(std::string(error.what()).find("is a directory"), std::string::npos) << error.what();
  }
}

TEST(MatrixMarketMalformed, NonSquareSymmetric) {
  EXPECT_PARSE_ERROR(kSymmetric + "3 4 0\n", 2, "must be square");
}

TEST(MatrixMarketMalformed, TruncatedFile) {
  EXPECT_PARSE_ERROR(kGeneral + "3 3 3\n1 1 1\n2 2 2\n", 4, "file ended after 2 of 3 entries");
  EXPECT_PARSE_ERROR(kGeneral + "3 3 2\n", 2, "file ended after 0 of 2 entries");
  EXPECT_PARSE_ERROR(kGeneral + "3 3 2\n1 1 1\n% trailing comment\n", 4, "file ended after 1 of 2 entries");
}

TEST(MatrixMarketMalformed, ExtraEntries) {
  EXPECT_PARSE_ERROR(kGeneral + "3 3 1\n1 1 1\n% c\n2 2 2\n", 5, "more entries than the 1 declared");
}

TEST(MatrixMarketMalformed, IndexOutOfRange) {
  EXPECT_PARSE_ERROR(kGeneral + "3 4 2\n1 1 1\n0 1 1\n", 4, "row index 0 out of range");
  EXPECT_PARSE_ERROR(kGeneral + "3 4 2\n1 1 1\n4 1 1\n", 4, "row index 4 out of range");
  EXPECT_PARSE_ERROR(kGeneral + "3 4 1\n1 0 1\n", 3, "column index 0 out of range");
  EXPECT_PARSE_ERROR(kGeneral + "3 4 1\n1 5 1\n", 3, "column index 5 out of range");
  EXPECT_PARSE_ERROR(kGeneral + "3 4 1\n99999999999999999999999 1 1\n", 3, "out of range");
}

TEST(MatrixMarketMalformed, NonFiniteValues) {
  EXPECT_PARSE_ERROR(kGeneral + "2 2 2\n1 1 1\n2 2 nan\n", 4, "not a finite number");
  EXPECT_PARSE_ERROR(kGeneral + "2 2 1\n1 1 -Inf\n", 3, "not a finite number");
  EXPECT_PARSE_ERROR(kGeneral + "2 2 1\n1 1 1e999\n", 3, "not a finite number");
}

// Each value is finite, but duplicates are summed and their sum can overflow (found by the fuzzer,
// fuzz/regressions/linalg_cuda_matrix_market_fuzzer/): the error names the line where the sum leaves
// the range of double, and a symmetric file's entry by its place in the lower triangle.
TEST(MatrixMarketMalformed, DuplicatesSummingBeyondTheRangeOfDouble) {
  EXPECT_PARSE_ERROR(kGeneral + "2 2 2\n1 1 1e308\n1 1 1e308\n", 4, "entry (1, 1) and its duplicates sum to inf");
  EXPECT_PARSE_ERROR(kSymmetric + "3 3 4\n2 1 -1e308\n3 3 1\n% c\n2 1 -1e308\n2 1 1\n", 6,
                     "entry (2, 1) and its duplicates sum to -inf");
  // Sums that stay finite are read.
  TempFile finite(kGeneral + "1 1 3\n1 1 1e308\n1 1 -1e308\n1 1 1e308\n");
  EXPECT_EQ(read_matrix_market(finite.path()).coeff(0, 0), 1e308);
}

TEST(MatrixMarketMalformed, NonNumericTokensAndWrongFieldCounts) {
  EXPECT_PARSE_ERROR(kGeneral + "2 2 1\n1 1 abc\n", 3, "found 'abc'");
  EXPECT_PARSE_ERROR(kGeneral + "2 2 1\n1 1 1.5x\n", 3, "found '1.5x'");
  EXPECT_PARSE_ERROR(kGeneral + "2 2 1\n1.5 1 1\n", 3, "row index");
  EXPECT_PARSE_ERROR(kGeneral + "2 2 1\n1 1\n", 3, "line ends before the value");
  EXPECT_PARSE_ERROR(kGeneral + "2 2 1\n1 1 1 junk\n", 3, "trailing text 'junk'");
  EXPECT_PARSE_ERROR("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n", 3, "trailing text '1'");
  EXPECT_PARSE_ERROR("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 2.5\n", 3, "found '2.5'");
}

TEST(MatrixMarketMalformed, UpperTriangleEntryInSymmetricFile) {
  EXPECT_PARSE_ERROR(kSymmetric + "3 3 2\n1 1 1\n1 3 1\n", 4, "above the diagonal");
}

// ---------------------------------------------------------------------------------------------------
// Reading in blocks

// A stream that cannot seek, as a pipe: the reader cannot know its size before reading it.
class UnseekableBuffer : public std::streambuf {
 public:
  explicit UnseekableBuffer(std::string text) : text_(std::move(text)) {
    setg(&text_[0], &text_[0], &text_[0] + text_.size());
  }

 private:
  std::string text_;
};

// What a read gives: the matrix, or the error's message.
struct Outcome {
  bool failed = false;
  std::string message;
  CsrMatrix matrix;
};

Outcome read_in_blocks(const std::string& text, std::size_t block_bytes, bool seekable) {
  Outcome outcome;
  try {
    if (seekable) {
      std::istringstream in(text);
      outcome.matrix = detail::read_matrix_market(in, "blocks.mtx", block_bytes);
    } else {
      UnseekableBuffer buffer(text);
      std::istream in(&buffer);
      outcome.matrix = detail::read_matrix_market(in, "blocks.mtx", block_bytes);
    }
  } catch (const Error& error) {
    outcome.failed = true;
    outcome.message = error.what();
  }
  return outcome;
}

// Every kind of text the tests above read, accepted or not.
std::vector<std::string> texts_of_every_kind() {
  return {
      "%%MatrixMarket MATRIX Coordinate Pattern General\n% a comment\n\n   \n2 3 3\n1 1\n\n% between\n2 3\n1 1\n",
      "%%MatrixMarket matrix coordinate integer symmetric\n3 3 4\n1 1 4\n3 1 -2\n3 1 5\n2 2 +7\n",
      "%%MatrixMarket matrix coordinate real general\r\n2 2 2\r\n1 2 1.5e0\r\n2 1 -.25",
      kGeneral + "3 3 4\n1 1 1.25e-300\n2 3 -123456.789012345678\n3 1 0x1.8p3\n3 3 7\n",
      "",
      "3 3 1\n1 1 1\n",
      "%%MatrixMarket matrix coordinate double general\n1 1 0\n",
      kGeneral + "% comment\n3 3\n",
      kGeneral + "3 3 1 7\n1 1 1\n",
      kGeneral + "% only comments\n\n",
      kGeneral + "2000000000 2000000000 1\n1 1 1\n",
      kGeneral + "2147483647 1 1\n1 1 1\n",
      kGeneral + "3 3 2000000000\n1 1 1\n",
      kGeneral + "1048576 1 1\n1 1 1\n",
      kGeneral + "1048640 1 1\n1 1 1\n",
      kGeneral + "1048641 1 1\n1 1 1\n",
      kSymmetric + "3 4 0\n",
      kGeneral + "3 3 3\n1 1 1\n2 2 2\n",
      kGeneral + "3 3 2\n1 1 1\n% trailing comment\n",
      kGeneral + "3 3 1\n1 1 1\n% c\n2 2 2\n",
      kGeneral + "3 4 2\n1 1 1\n4 1 1\n",
      kGeneral + "3 4 1\n99999999999999999999999 1 1\n",
      kGeneral + "2 2 2\n1 1 1\n2 2 nan\n",
      kGeneral + "2 2 1\n1 1 1e999\n",
      kGeneral + "2 2 2\n1 1 1e308\n1 1 1e308\n",
      kSymmetric + "3 3 4\n2 1 -1e308\n3 3 1\n% c\n2 1 -1e308\n2 1 1\n",
      kGeneral + "1 1 3\n1 1 1e308\n1 1 -1e308\n1 1 1e308\n",
      kGeneral + "2 2 1\n1 1 1.5x\n",
      kGeneral + "2 2 1\n1 1\n",
      kGeneral + "2 2 1\n1 1 1 junk\n",
      kSymmetric + "3 3 2\n1 1 1\n1 3 1\n",
  };
}

// Lines split at every place by block boundaries (blocks of 1 byte and up), from a stream that can
// seek and from one that cannot: the same matrix or the same error as a read in one block.
TEST(MatrixMarketBlocks, EveryBlockBoundaryGivesTheSameMatrixOrError) {
  for (const std::string& text : texts_of_every_kind()) {
    const Outcome whole = read_in_blocks(text, std::size_t(1) << 20, true);
    for (const std::size_t block : {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 64, 1 << 20}) {
      for (const bool seekable : {true, false}) {
        SCOPED_TRACE("block of " + std::to_string(block) + " bytes, " + (seekable ? "seekable" : "unseekable") +
                     " stream, text:\n" + text);
        const Outcome outcome = read_in_blocks(text, block, seekable);
        EXPECT_EQ(outcome.failed, whole.failed);
        EXPECT_EQ(outcome.message, whole.message);
        if (!whole.failed && !outcome.failed) expect_identical(whole.matrix, outcome.matrix);
      }
    }
  }
}

// A stream that cannot seek checks the size line against the bytes that follow once it has read
// them, and names the size line as a file does.
TEST(MatrixMarketBlocks, UnseekableStreamChecksTheSizeLineAtTheEnd) {
  const Outcome outcome = read_in_blocks(kGeneral + "2000000000 2000000000 1\n1 1 1\n", 4, false);
  EXPECT_TRUE(outcome.failed);
  EXPECT_EQ(outcome.message.rfind("blocks.mtx:2: ", 0), 0u) << outcome.message;
  EXPECT_NE(outcome.message.find("is mostly empty"), std::string::npos) << outcome.message;
}

// A file a few times the 1 MiB block, so that lines straddle real block boundaries: read exactly, and
// an error on its last line names that line.
TEST(MatrixMarketBlocks, FileOfSeveralBlocks) {
  const CsrMatrix a = random_sparse(200000, 150000, 120000, 5);
  TempFile file;
  write_matrix_market(file.path(), a);
  ASSERT_GT(fs::file_size(file.path()), std::uintmax_t(3) << 20);
  expect_identical(a, read_matrix_market(file.path()));
  std::ifstream stream(file.path(), std::ios::binary);
  expect_identical(a, read_matrix_market(stream, file.path()));

  std::ifstream in(file.path(), std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const long lines = static_cast<long>(std::count(text.begin(), text.end(), '\n'));
  text.insert(text.rfind(' ') + 1, "x");  // the last value, "x-1.23e-4": not a number
  EXPECT_PARSE_ERROR(text, lines, "found 'x");
}

// Lines are at most 1 MiB (2^20 bytes, the newline not counted): a longer one is no Matrix Market
// line, and is refused before it is held whole.
TEST(MatrixMarketBlocks, LineLongerThanOneMiB) {
  const std::string comment = "%" + std::string((std::size_t(1) << 20) - 1, 'c') + "\n";
  TempFile longest(kGeneral + comment + "1 1 1\n1 1 2\n");
  EXPECT_EQ(read_matrix_market(longest.path()).coeff(0, 0), 2.0);
  EXPECT_PARSE_ERROR(kGeneral + "%" + comment + "1 1 1\n1 1 2\n", 2, "line longer than 1 MiB");
  EXPECT_PARSE_ERROR(kGeneral + "1 1 1\n1 1 2" + std::string(std::size_t(3) << 20, ' ') + "\n", 3,
                     "line longer than 1 MiB");
}

// The memory a read takes is the matrix and a block of the file, not the file: a 48 MiB file whose
// entries are few (comment lines between them) is read with a few MiB.
TEST(MatrixMarketBlocks, MemoryOfAReadIsTheMatrixNotTheFile) {
  std::string text = kGeneral + "1000 1000 1000\n";
  const std::string comment = "%" + std::string(1022, ' ') + "\n";
  text.reserve(std::size_t(50) << 20);
  for (int k = 0; k < 1000; ++k) {
    text += std::to_string(k + 1) + " " + std::to_string(1000 - k) + " " + std::to_string(k) + ".5\n";
    for (int c = 0; c < 50; ++c) text += comment;
  }
  TempFile file(text);
  const std::size_t file_bytes = text.size();
  ASSERT_GT(file_bytes, std::size_t(48) << 20);
  text.clear();
  text.shrink_to_fit();
  const long long growth = test_support::peak_memory_growth([&] {
    const CsrMatrix a = read_matrix_market(file.path());
    if (a.nonZeros() != 1000 || a.coeff(999, 0) != 999.5) throw std::runtime_error("wrong matrix");
  });
  if (growth < 0) GTEST_SKIP() << "peak memory cannot be measured here";
  std::cout << "reading a " << file_bytes / 1048576.0 << " MiB file grew the peak memory by " << growth / 1048576.0
            << " MiB\n";
  EXPECT_LT(growth, 8LL << 20);
}

}  // namespace
}  // namespace linalg_cuda
