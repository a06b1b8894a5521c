// CARMEN log reading and writing: the five real logs of ../shared/data/carmen, exact write -> read
// round trips, hand-written FLASER / ROBOTLASER1 lines checked field by field, and every kind of
// malformed line reported as ParseError with the right line number.
#include <zlib.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gridmap_cuda/carmen_log.h"
#include "linalg_cuda/errors.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using gridmap_cuda::LaserScan;
using gridmap_cuda::read_carmen_log;
using gridmap_cuda::write_carmen_log;

constexpr double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------------------------------------------
// Real logs

struct RealLog {
  const char* file;
  size_t scans;
  size_t beams;
  double angular_resolution;
  size_t no_return_readings;  // readings >= 80 m (81.91 / 81.83 in these logs; aces uses 50 instead)
};

void PrintTo(const RealLog& log, std::ostream* os) { *os << log.file; }

class RealLogTest : public ::testing::TestWithParam<RealLog> {};

fs::path carmen_dir() { return test_support::data_dir() / "carmen"; }

#define SKIP_WITHOUT_CARMEN_DATA()                                                                       \
  do {                                                                                                   \
    if (!fs::is_directory(carmen_dir()))                                                                 \
      GTEST_SKIP() << "CARMEN logs not found in " << carmen_dir()                                      \
                   << " (set CUDA_SOLVERS_DATA to the folder holding carmen/)";                          \
  } while (0)

TEST_P(RealLogTest, ReadsEveryScanWithCarmenGeometry) {
  SKIP_WITHOUT_CARMEN_DATA();
  const RealLog& log = GetParam();
  const fs::path path = carmen_dir() / log.file;
  ASSERT_TRUE(fs::exists(path)) << path;

  const std::vector<LaserScan> scans = read_carmen_log(path.string());
  ASSERT_EQ(scans.size(), log.scans);
  size_t no_return = 0;
  for (size_t s = 0; s < scans.size(); ++s) {
    const LaserScan& scan = scans[s];
    ASSERT_EQ(scan.ranges.size(), log.beams) << "scan " << s;
    ASSERT_EQ(scan.start_angle, -kPi / 2) << "scan " << s;
    ASSERT_EQ(scan.angular_resolution, log.angular_resolution) << "scan " << s;
    ASSERT_EQ(scan.max_range, 80.0) << "scan " << s;
    ASSERT_TRUE(std::isfinite(scan.laser_pose.x) && std::isfinite(scan.laser_pose.y) &&
                std::isfinite(scan.laser_pose.theta) && std::isfinite(scan.timestamp))
        << "scan " << s;
    for (size_t b = 0; b < scan.ranges.size(); ++b) {
      ASSERT_TRUE(std::isfinite(scan.ranges[b]) && scan.ranges[b] >= 0.0f) << "scan " << s << " beam " << b;
      if (scan.ranges[b] >= 80.0f) ++no_return;
    }
  }
  EXPECT_EQ(no_return, log.no_return_readings);
}

INSTANTIATE_TEST_SUITE_P(
    Carmen, RealLogTest,
    ::testing::Values(RealLog{"freiburg-079-corrected.log.gz", 4791, 360, kPi / 360, 36004},
                      RealLog{"freiburg-101-corrected.log.gz", 292, 360, kPi / 360, 12555},
                      RealLog{"intel-corrected.log.gz", 910, 180, kPi / 180, 4172},
                      RealLog{"csail-corrected.log.gz", 406, 361, kPi / 360, 3907},
                      RealLog{"aces-corrected.log.gz", 440, 180, kPi / 180, 0}),
    [](const ::testing::TestParamInfo<RealLog>& info) {
      std::string name = info.param.file;
      name = name.substr(0, name.find("-corrected"));
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

// First and last FLASER lines of freiburg-079, read with zcat.
TEST(RealLogSpotCheck, Freiburg079FirstAndLastScanAndTiming) {
  SKIP_WITHOUT_CARMEN_DATA();
  const fs::path path = carmen_dir() / "freiburg-079-corrected.log.gz";
  const auto start = std::chrono::steady_clock::now();
  const std::vector<LaserScan> scans = read_carmen_log(path.string());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ timing   ] read_carmen_log(freiburg-079): " << scans.size() << " scans in " << seconds * 1e3
            << " ms\n";
  ASSERT_EQ(scans.size(), 4791u);
  const LaserScan& first = scans.front();
  EXPECT_EQ(first.ranges[0], 1.65f);
  EXPECT_EQ(first.ranges[1], 1.66f);
  EXPECT_EQ(first.ranges[2], 1.63f);
  EXPECT_EQ(first.ranges[359], 1.0f);
  EXPECT_EQ(first.laser_pose.x, 0.00123601);
  EXPECT_EQ(first.laser_pose.y, -0.00106807);
  EXPECT_EQ(first.laser_pose.theta, 2.85e-05);
  EXPECT_EQ(first.timestamp, 0.227623);
  const LaserScan& last = scans.back();
  EXPECT_EQ(last.laser_pose.x, 0.0319692);
  EXPECT_EQ(last.laser_pose.y, -0.94701);
  EXPECT_EQ(last.laser_pose.theta, -1.8314);
  EXPECT_EQ(last.timestamp, 1061.5);
}

// ---------------------------------------------------------------------------------------------------
// Temporary files

class CarmenLogFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("carmen_log_test_" + std::string(info->name()) + "_" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write_text(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    EXPECT_TRUE(out) << path;
    return path.string();
  }

  std::string write_gz(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    gzFile f = gzopen(path.string().c_str(), "wb");
    EXPECT_NE(f, nullptr);
    if (!text.empty()) {
      EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), int(text.size()));
    }
    EXPECT_EQ(gzclose(f), Z_OK);
    return path.string();
  }

  static std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Reading `text` must throw ParseError at `line` with `fragment` in its message.
  void expect_error(const std::string& text, long line, const std::string& fragment) {
    const std::string path = write_text("bad" + std::to_string(counter_++) + ".log", text);
    try {
      read_carmen_log(path);
      ADD_FAILURE() << "no ParseError for:\n" << text;
    } catch (const linalg_cuda::ParseError& e) {
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_EQ(e.file(), path);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "message '" << e.what() << "' lacks '" << fragment << "'";
    }
  }

  fs::path dir_;
  int counter_ = 0;
};

// Two lines the malformed cases are placed after, so that line numbers are not trivially 1.
const std::string kPreamble =
    "# message formats defined: PARAM SYNC ODOM FLASER RLASER\n"
    "PARAM robot_use_laser on nohost 0\n";
const std::string kGoodFlaser = "FLASER 3 1 2 3 0.5 0.25 0.125 0.5 0.25 0.125 10.5 host 10.5\n";

// ---------------------------------------------------------------------------------------------------
// Round trips

std::vector<LaserScan> random_scans(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> range(0.0f, 100.0f);
  std::uniform_real_distribution<double> coordinate(-1e4, 1e4);
  std::uniform_real_distribution<double> angle(-kPi, kPi);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const size_t sizes[] = {0, 1, 2, 180, 181, 360, 361, 401, 1000, 37};
  std::vector<LaserScan> scans;
  for (int i = 0; i < 40; ++i) {
    LaserScan scan;
    scan.laser_pose = {coordinate(rng), coordinate(rng), angle(rng)};
    scan.start_angle = angle(rng);
    scan.angular_resolution = unit(rng) * 0.1;
    scan.max_range = 10.0 + 100.0 * unit(rng);
    scan.timestamp = 1.1e9 + 1e5 * unit(rng);
    scan.ranges.resize(sizes[i % 10]);
    for (float& r : scan.ranges) r = range(rng);
    scans.push_back(scan);
  }
  // Awkward values: zeros, the extremes of float, negative zero poses, tiny timestamps.
  LaserScan edge;
  edge.ranges = {0.0f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                 std::numeric_limits<float>::max(), 81.91f, 1.0f / 3.0f, 16777217.0f};
  edge.laser_pose = {-0.0, 1e-300, -kPi};
  edge.start_angle = -kPi / 2;
  edge.angular_resolution = kPi / 360;
  edge.timestamp = 5e-324;
  scans.push_back(edge);
  return scans;
}

void expect_identical(const std::vector<LaserScan>& a, const std::vector<LaserScan>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("scan " + std::to_string(i));
    EXPECT_EQ(a[i].laser_pose.x, b[i].laser_pose.x);
    EXPECT_EQ(a[i].laser_pose.y, b[i].laser_pose.y);
    EXPECT_EQ(a[i].laser_pose.theta, b[i].laser_pose.theta);
    EXPECT_EQ(a[i].start_angle, b[i].start_angle);
    EXPECT_EQ(a[i].angular_resolution, b[i].angular_resolution);
    EXPECT_EQ(a[i].max_range, b[i].max_range);
    EXPECT_EQ(a[i].timestamp, b[i].timestamp);
    EXPECT_EQ(a[i].ranges, b[i].ranges);  // exact float equality, element by element
  }
}

TEST_F(CarmenLogFileTest, RoundTripPlainIsExact) {
  const std::vector<LaserScan> scans = random_scans(1);
  const std::string path = (dir_ / "out.log").string();
  write_carmen_log(path, scans);
  const std::string bytes = read_bytes(path);
  ASSERT_GT(bytes.size(), 2u);
  EXPECT_NE(bytes.substr(0, 2), std::string("\x1f\x8b")) << "plain path written compressed";
  EXPECT_NE(bytes.find("\nROBOTLASER1 0 "), std::string::npos);
  EXPECT_NE(bytes.find(" cuda_solvers "), std::string::npos);
  expect_identical(read_carmen_log(path), scans);
}

TEST_F(CarmenLogFileTest, RoundTripGzipIsExact) {
  const std::vector<LaserScan> scans = random_scans(2);
  const std::string path = (dir_ / "out.log.gz").string();
  write_carmen_log(path, scans);
  EXPECT_EQ(read_bytes(path).substr(0, 2), std::string("\x1f\x8b")) << ".gz path not gzip-compressed";
  expect_identical(read_carmen_log(path), scans);
}

TEST_F(CarmenLogFileTest, RoundTripOfARealLog) {
  SKIP_WITHOUT_CARMEN_DATA();
  const std::vector<LaserScan> scans = read_carmen_log((carmen_dir() / "intel-corrected.log.gz").string());
  const std::string path = (dir_ / "intel.log.gz").string();
  write_carmen_log(path, scans);
  expect_identical(read_carmen_log(path), scans);
}

TEST_F(CarmenLogFileTest, WrittenLineFieldsAreCarmenRobotLaser1) {
  LaserScan scan;
  scan.laser_pose = {1.5, -2.5, 0.25};
  scan.start_angle = -1.0;
  scan.angular_resolution = 0.5;
  scan.max_range = 30.0;
  scan.timestamp = 12.75;
  scan.ranges = {1.0f, 2.5f, 3.0f};
  const std::string path = (dir_ / "one.log").string();
  write_carmen_log(path, {scan});
  std::istringstream text(read_bytes(path));
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(text, line)) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "ROBOTLASER1 0 -1 1 0.5 30 0.01 0 3 1 2.5 3 0 1.5 -2.5 0.25 1.5 -2.5 0.25 0 0 0 0 0 12.75 "
            "cuda_solvers 12.75");
}

TEST_F(CarmenLogFileTest, EmptyScanListWritesAReadableLog) {
  for (const char* name : {"empty.log", "empty.log.gz"}) {
    const std::string path = (dir_ / name).string();
    write_carmen_log(path, {});
    EXPECT_TRUE(read_carmen_log(path).empty()) << name;
  }
}

TEST_F(CarmenLogFileTest, WriteFailuresThrow) {
  EXPECT_THROW(write_carmen_log((dir_ / "no_such_dir" / "x.log").string(), random_scans(3)), linalg_cuda::Error);
  if (fs::exists("/dev/full")) {
    EXPECT_THROW(write_carmen_log("/dev/full", random_scans(3)), linalg_cuda::Error);
  }
  std::vector<LaserScan> bad(1);
  bad[0].ranges = {1.0f, -1.0f};
  EXPECT_THROW(write_carmen_log((dir_ / "neg.log").string(), bad), linalg_cuda::InvalidArgument);
  bad[0].ranges = {std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THROW(write_carmen_log((dir_ / "nan.log").string(), bad), linalg_cuda::InvalidArgument);
  bad[0].ranges = {1.0f};
  bad[0].laser_pose.x = std::numeric_limits<double>::infinity();
  EXPECT_THROW(write_carmen_log((dir_ / "inf.log").string(), bad), linalg_cuda::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------------
// Hand-written logs

TEST_F(CarmenLogFileTest, FlaserFieldsLandWhereTheyShould) {
  // Laser pose, robot pose and the two timestamps all differ, so a shifted field shows.
  const std::string path =
      write_text("flaser.log", kPreamble + "FLASER 3 1.5 2.5 3.5 10 20 0.5 11 21 0.6 123.25 myhost 456.5\n");
  const auto scans = read_carmen_log(path);
  ASSERT_EQ(scans.size(), 1u);
  const LaserScan& s = scans[0];
  EXPECT_EQ(s.ranges, (std::vector<float>{1.5f, 2.5f, 3.5f}));
  EXPECT_EQ(s.laser_pose.x, 10.0);
  EXPECT_EQ(s.laser_pose.y, 20.0);
  EXPECT_EQ(s.laser_pose.theta, 0.5);
  EXPECT_EQ(s.timestamp, 123.25);
  EXPECT_EQ(s.start_angle, -kPi / 2);
  EXPECT_EQ(s.angular_resolution, kPi / 2);  // 3 beams: pi / (n - 1)
  EXPECT_EQ(s.max_range, 80.0);
}

TEST_F(CarmenLogFileTest, FlaserGeometryIsGuessedLikeCarmen) {
  const std::pair<int, double> cases[] = {{180, kPi / 180}, {181, kPi / 180}, {360, kPi / 360}, {361, kPi / 360},
                                          {400, kPi / 720}, {401, kPi / 720}, {5, kPi / 4},     {91, kPi / 90}};
  std::string text;
  for (const auto& c : cases) {
    text += "FLASER " + std::to_string(c.first);
    for (int i = 0; i < c.first; ++i) text += " 1.25";
    text += " 1 2 3 4 5 6 7 host 8\n";
  }
  const auto scans = read_carmen_log(write_text("geometry.log", text));
  ASSERT_EQ(scans.size(), std::size(cases));
  for (size_t i = 0; i < scans.size(); ++i) {
    EXPECT_EQ(scans[i].ranges.size(), static_cast<size_t>(cases[i].first));
    EXPECT_EQ(scans[i].angular_resolution, cases[i].second) << cases[i].first << " beams";
    EXPECT_EQ(scans[i].start_angle, -kPi / 2);
  }
}

TEST_F(CarmenLogFileTest, RobotLaser1FieldsLandWhereTheyShould) {
  const std::string path = write_text(
      "robotlaser.log",
      kPreamble +
          // type start fov res maxr acc mode | n r1..r4 | k rem1 rem2 | laser pose | robot pose |
          // tv rv fwd side turn | ts host lts
          "ROBOTLASER1 1 -2 4 0.01 30.5 0.02 0 4 1 2 3 4.5 2 100 200 5 6 0.7 7 8 0.9 0.3 0.1 0.55 0.45 0.25 789.5 "
          "host 999.5\n"
          "ROBOTLASER1 0 -1.5707963267948966 3.1415926535897931 0.017453292519943295 81.9 0.01 0 2 0.5 0.75 0 "
          "-1 -2 -3 -4 -5 -6 0 0 0 0 0 1.25 host 2.5\n");
  const auto scans = read_carmen_log(path);
  ASSERT_EQ(scans.size(), 2u);
  const LaserScan& a = scans[0];
  EXPECT_EQ(a.start_angle, -2.0);
  EXPECT_EQ(a.angular_resolution, 0.01);
  EXPECT_EQ(a.max_range, 30.5);
  EXPECT_EQ(a.ranges, (std::vector<float>{1.0f, 2.0f, 3.0f, 4.5f}));
  EXPECT_EQ(a.laser_pose.x, 5.0);
  EXPECT_EQ(a.laser_pose.y, 6.0);
  EXPECT_EQ(a.laser_pose.theta, 0.7);
  EXPECT_EQ(a.timestamp, 789.5);
  const LaserScan& b = scans[1];
  EXPECT_EQ(b.start_angle, -1.5707963267948966);
  EXPECT_EQ(b.angular_resolution, 0.017453292519943295);
  EXPECT_EQ(b.max_range, 81.9);
  EXPECT_EQ(b.ranges, (std::vector<float>{0.5f, 0.75f}));
  EXPECT_EQ(b.laser_pose.x, -1.0);
  EXPECT_EQ(b.laser_pose.y, -2.0);
  EXPECT_EQ(b.laser_pose.theta, -3.0);
  EXPECT_EQ(b.timestamp, 1.25);
}

TEST_F(CarmenLogFileTest, OtherMessagesCommentsAndBlankLinesAreSkipped) {
  const std::string text =
      "# message formats defined: PARAM SYNC ODOM FLASER RLASER TRUEPOS\n"
      "#PARAM simulator_num_readings 181 nohost 0\n"
      "   # indented comment FLASER 2 1 2\n"
      "\n"
      "   \t  \n"
      "PARAM robot_front_laser_max 80.99 nohost 0\n"
      "ODOM 0 0 0 0 0 0 0.015885 pippo 0.015885\n"
      "NEFF 10\n"
      "SYNC tagname\n"
      "RLASER 2 1 2 0 0 0 0 0 0 1 host 1\n"
      "RAWLASER1 0 -1.57 3.14 0.0175 81.9 0.01 0 2 1 2 0 1 host 1\n"
      "ROBOTLASER2 0 -1.57 3.14 0.0175 81.9 0.01 0 2 1 2 0 0 0 0 0 0 0 0 0 0 0 0 1 host 1\n"
      "TRUEPOS 1 2 3 4 5 6 7 host 8\n"
      "FLASERX this is not a laser line\n"
      "garbage line ! with @ anything\n"
      "flaser 3 lower case is another type\n" +
      kGoodFlaser +
      "FLASER\t2\t4\t5\t1\t2\t3\t4\t5\t6\t7\thost\t8\r\n"  // tabs and a Windows line end
      "  FLASER 1 9 0 0 0 0 0 0 20 host 20\n";              // leading blanks
  const auto scans = read_carmen_log(write_text("mixed.log", text));
  ASSERT_EQ(scans.size(), 3u);
  EXPECT_EQ(scans[0].ranges, (std::vector<float>{1.0f, 2.0f, 3.0f}));
  EXPECT_EQ(scans[1].ranges, (std::vector<float>{4.0f, 5.0f}));
  EXPECT_EQ(scans[1].laser_pose.x, 1.0);
  EXPECT_EQ(scans[1].timestamp, 7.0);
  EXPECT_EQ(scans[2].ranges, (std::vector<float>{9.0f}));
  EXPECT_EQ(scans[2].timestamp, 20.0);
}

TEST_F(CarmenLogFileTest, HostnameAndLoggerTimestampMayBeMissing) {
  const std::string text =
      "FLASER 2 1 2 0.5 0.25 0.125 0 0 0 10.5\n"
      "FLASER 2 1 2 0.5 0.25 0.125 0 0 0 11.5 host\n"
      "FLASER 2 1 2 0.5 0.25 0.125 0 0 0 12.5 host 99\n"
      "ROBOTLASER1 0 -1 2 0.5 30 0.01 0 2 1 2 0 0.5 0.25 0.125 0 0 0 0 0 0 0 0 13.5\n"
      "ROBOTLASER1 0 -1 2 0.5 30 0.01 0 2 1 2 0 0.5 0.25 0.125 0 0 0 0 0 0 0 0 14.5 host\n";
  const auto scans = read_carmen_log(write_text("lenient.log", text));
  ASSERT_EQ(scans.size(), 5u);
  for (size_t i = 0; i < scans.size(); ++i) {
    EXPECT_EQ(scans[i].timestamp, 10.5 + static_cast<double>(i)) << i;
    EXPECT_EQ(scans[i].laser_pose.theta, 0.125) << i;
    EXPECT_EQ(scans[i].ranges, (std::vector<float>{1.0f, 2.0f})) << i;
  }
}

TEST_F(CarmenLogFileTest, LastLineWithoutNewlineIsFineWhenComplete) {
  std::string text = kPreamble + kGoodFlaser + kGoodFlaser;
  text.pop_back();  // drop the final '\n'
  const auto scans = read_carmen_log(write_text("no_newline.log", text));
  ASSERT_EQ(scans.size(), 2u);
  EXPECT_EQ(scans[1].timestamp, 10.5);
}

TEST_F(CarmenLogFileTest, EmptyAndCommentOnlyLogsGiveNoScans) {
  EXPECT_TRUE(read_carmen_log(write_text("empty.log", "")).empty());
  EXPECT_TRUE(read_carmen_log(write_text("comments.log", kPreamble + "\n# nothing\n")).empty());
  EXPECT_TRUE(read_carmen_log(write_gz("empty.log.gz", "")).empty());
}

TEST_F(CarmenLogFileTest, GzipAndPlainReadTheSame) {
  const std::string text = kPreamble + kGoodFlaser + "ODOM 0 0 0 0 0 0 1 host 1\n" + kGoodFlaser;
  const auto plain = read_carmen_log(write_text("same.log", text));
  const auto gz = read_carmen_log(write_gz("same.log.gz", text));
  const auto gz_other_name = read_carmen_log(write_gz("same.dat", text));  // detected by content
  ASSERT_EQ(plain.size(), 2u);
  expect_identical(plain, gz);
  expect_identical(plain, gz_other_name);
}

TEST_F(CarmenLogFileTest, LinesLongerThanTheReadBlockAndManyBlocks) {
  // One 300000-beam line (> 1 MiB), then enough lines to span several blocks, then a bad line whose
  // number must still be right.
  std::string text = "FLASER 300000";
  for (int i = 0; i < 300000; ++i) text += " 12.5";
  text += " 1 2 3 4 5 6 7 host 7\n";
  const int kLines = 5000;
  for (int i = 0; i < kLines; ++i) text += kGoodFlaser;
  const std::string good = write_text("long.log", text);
  const auto scans = read_carmen_log(good);
  ASSERT_EQ(scans.size(), static_cast<size_t>(kLines + 1));
  EXPECT_EQ(scans[0].ranges.size(), 300000u);
  EXPECT_EQ(scans[0].ranges.back(), 12.5f);
  EXPECT_EQ(scans[0].timestamp, 7.0);
  EXPECT_EQ(scans.back().timestamp, 10.5);
  expect_error(text + "FLASER 2 1 nan 0 0 0 0 0 0 1 host 1\n", kLines + 2, "reading 1 is NaN");
}

// ---------------------------------------------------------------------------------------------------
// Malformed input: ParseError with the right line (line 3, after kPreamble).

TEST_F(CarmenLogFileTest, BeamCountLargerThanReadingsPresent) {
  expect_error(kPreamble + "FLASER 5 1 2 3 0 0 0 0 0 0 1.5 host 1.5\n" + kGoodFlaser, 3,
               "FLASER: expected 5 readings, found 3");
  expect_error(kPreamble + "FLASER 360 1 2 3 0 0 0 0 0 0 1.5\n", 3, "expected 360 readings");
  expect_error(kPreamble + "FLASER 3 1 2 3 0 0 1.5 host 1.5\n", 3, "FLASER: line too short");
}

TEST_F(CarmenLogFileTest, BeamCountSmallerThanReadingsPresent) {
  expect_error(kPreamble + "FLASER 2 1 2 3 0 0 0 0 0 0 1.5 host 1.5\n", 3,
               "expected 2 readings, found 3 (line too long");
}

TEST_F(CarmenLogFileTest, NonNumericReading) {
  expect_error(kPreamble + "FLASER 3 1 abc 3 0 0 0 0 0 0 1.5 host 1.5\n", 3, "reading 1 is not a number: 'abc'");
  expect_error(kPreamble + "FLASER 3 1 2 3e 0 0 0 0 0 0 1.5 host 1.5\n", 3, "reading 2 is not a number: '3e'");
  expect_error(kPreamble + "FLASER 3 1 2,5 3 0 0 0 0 0 0 1.5 host 1.5\n", 3, "reading 1 is not a number");
}

TEST_F(CarmenLogFileTest, NanAndInfiniteRanges) {
  expect_error(kPreamble + "FLASER 3 1 2 nan 0 0 0 0 0 0 1.5 host 1.5\n", 3, "reading 2 is NaN");
  expect_error(kPreamble + "FLASER 3 NaN 2 3 0 0 0 0 0 0 1.5 host 1.5\n", 3, "reading 0 is NaN");
  expect_error(kPreamble + "FLASER 3 1 inf 3 0 0 0 0 0 0 1.5 host 1.5\n", 3, "reading 1 is not finite");
  expect_error(kPreamble + "FLASER 3 1 2 1e39 0 0 0 0 0 0 1.5 host 1.5\n", 3, "reading 2 is not finite");
}

TEST_F(CarmenLogFileTest, NegativeRange) {
  expect_error(kPreamble + "FLASER 3 -0.5 2 3 0 0 0 0 0 0 1.5 host 1.5\n", 3, "reading 0 is negative: '-0.5'");
  expect_error(kPreamble + "ROBOTLASER1 0 -1 2 0.5 30 0.01 0 2 1 -2 0 0 0 0 0 0 0 0 0 0 0 0 1.5 host 1.5\n", 3,
               "ROBOTLASER1: reading 1 is negative");
}

// A "line" longer than any laser line (here a gzip-compressed 65 MiB of one character, 65 KiB on disk)
// is refused before its buffer fills the memory.
TEST_F(CarmenLogFileTest, OverlongLineIsRefused) {
  const std::string path = write_gz("long.log.gz", kPreamble + std::string(std::size_t(65) << 20, 'x'));
  try {
    read_carmen_log(path);
    ADD_FAILURE() << "no error";
  } catch (const linalg_cuda::ParseError& e) {
    EXPECT_EQ(e.line(), 3) << e.what();
    EXPECT_NE(std::string(e.what()).find("line longer than 64 MiB"), std::string::npos) << e.what();
  }
}

TEST_F(CarmenLogFileTest, NonPositiveMaximumRange) {
  expect_error(kPreamble + "ROBOTLASER1 0 -1 2 0.5 -30 0.01 0 2 1 2 0 0 0 0 0 0 0 0 0 0 0 0 1.5 host 1.5\n", 3,
               "ROBOTLASER1: field 'maximum_range' must be positive, got '-30'");
  expect_error(kPreamble + "ROBOTLASER1 0 -1 2 0.5 0 0.01 0 2 1 2 0 0 0 0 0 0 0 0 0 0 0 0 1.5 host 1.5\n", 3,
               "field 'maximum_range' must be positive, got '0'");
}

// A fan whose last beam's angle overflows (found by the fuzzer's round trip,
// fuzz/regressions/gridmap_cuda_carmen_log_fuzzer/): read, it failed only when written and read again,
// because the written field of view was infinite. The reader refuses it naming the line; the writer
// refuses such a scan built in memory.
TEST_F(CarmenLogFileTest, BeamFanBeyondTheRangeOfDouble) {
  expect_error(kPreamble + "ROBOTLASER1 0 -1.5 3.1 1e308 81.9 0.01 0 3 1.5 2.25 80 0 1 2 0.1 1 2 0.1 0 0 0 0 0 "
                           "1234.5 host 1234.6\n",
               3, "ROBOTLASER1: the last of 3 beams has no finite angle (start_angle '-1.5' + 2 * angular_resolution "
                  "'1e308')");
  // Two beams of 1e308 are far apart, but their angles exist: read (the mapper judges such angles).
  const auto scans = read_carmen_log(write_text(
      "two.log", "ROBOTLASER1 0 -1.5 3.1 1e308 81.9 0.01 0 2 1.5 2.25 0 1 2 0.1 1 2 0.1 0 0 0 0 0 1.5 host 1.5\n"));
  ASSERT_EQ(scans.size(), 1u);
  EXPECT_EQ(scans[0].angular_resolution, 1e308);
  std::vector<LaserScan> bad(1);
  bad[0].ranges = {1.0f, 2.0f, 3.0f};
  bad[0].angular_resolution = 1e308;
  EXPECT_THROW(write_carmen_log((dir_ / "fan.log").string(), bad), linalg_cuda::InvalidArgument);
}

// A position farther than 10^8 m from the origin is a corrupt field, not a place: refused naming the
// file, the line, the field and its value as %g (not the 300 digits of 1e300). Positions of real
// frames (UTM, Earth-centred) and the limit itself are read; the writer refuses what the reader would.
TEST_F(CarmenLogFileTest, PoseFarBeyondAnyMap) {
  const std::string path = write_text("far.log", kPreamble + kGoodFlaser + "FLASER 3 1 2 3 1e300 0 0 0 0 0 1.5 host 1.5\n");
  try {
    read_carmen_log(path);
    ADD_FAILURE() << "no error";
  } catch (const linalg_cuda::ParseError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":4: FLASER: field 'laser_x' is 1e+300 m, farther than 1e+08 m from the "
                                            "origin: not a position in any map (a corrupt field?)");
  }
  expect_error(kPreamble + "ROBOTLASER1 0 -1 2 0.5 30 0.01 0 2 1 2 0 0 -2.5e8 0 0 0 0 0 0 0 0 0 1.5 host 1.5\n", 3,
               "ROBOTLASER1: field 'laser_y' is -2.5e+08 m, farther than 1e+08 m");
  expect_error(kPreamble + "FLASER 3 1 2 3 0 0 0 1e9 0 0 1.5 host 1.5\n", 3, "FLASER: field 'robot_x' is 1e+09 m");
  expect_error(kPreamble + "FLASER 3 1 2 3 0 0 0 0 -1e200 0 1.5 host 1.5\n", 3, "field 'robot_y' is -1e+200 m");

  const auto scans = read_carmen_log(write_text(
      "utm.log", "FLASER 3 1 2 3 512345.25 5403210.5 0.3 512345.25 5403210.5 0.3 1.5 host 1.5\n"
                 "FLASER 3 1 2 3 -1e8 1e8 1e300 -1e8 1e8 0 1.5 host 1.5\n"));
  ASSERT_EQ(scans.size(), 2u);
  EXPECT_EQ(scans[0].laser_pose.x, 512345.25);
  EXPECT_EQ(scans[0].laser_pose.y, 5403210.5);
  EXPECT_EQ(scans[1].laser_pose.x, -1e8);
  EXPECT_EQ(scans[1].laser_pose.theta, 1e300);  // an angle is any finite number

  std::vector<LaserScan> far(1);
  far[0].laser_pose.y = 1.5e8;
  EXPECT_THROW(write_carmen_log((dir_ / "far_written.log").string(), far), linalg_cuda::InvalidArgument);
}

TEST_F(CarmenLogFileTest, MissingOrBadPoseFields) {
  expect_error(kPreamble + "FLASER 3 1 2 3 0 0 0 1.5 host 1.5\n", 3,
               "FLASER: expected 3 readings, found 0 (line too short");
  expect_error(kPreamble + "FLASER 3 1 2 3 0 abc 0 0 0 0 1.5 host 1.5\n", 3,
               "FLASER: field 'laser_y' is not a number: 'abc'");
  expect_error(kPreamble + "FLASER 3 1 2 3 0 0 0 0 0 x 1.5 host 1.5\n", 3, "field 'robot_theta' is not a number");
  expect_error(kPreamble + "FLASER 3 1 2 3 0 0 nan 0 0 0 1.5 host 1.5\n", 3, "field 'laser_theta' is not finite");
  expect_error(kPreamble + "FLASER 3 1 2 3 0 0 0 0 0 0 t1 host 1.5\n", 3, "field 'ipc_timestamp' is not a number");
  expect_error(kPreamble +
                   "ROBOTLASER1 0 -1 2 0.5 30 0.01 0 2 1 2 0 abc 0 0 0 0 0 0 0 0 0 0 1.5 host 1.5\n",
               3, "ROBOTLASER1: field 'laser_x' is not a number: 'abc'");
  expect_error(kPreamble + "ROBOTLASER1 0 -1 2 0.5 30 0.01 0 2 1 2 0 0 0 0 0 0 0 1.5 host 1.5\n", 3,
               "ROBOTLASER1: expected 2 readings");
  expect_error(kPreamble + "ROBOTLASER1 0 -1.5\n", 3, "ROBOTLASER1: missing field 'field_of_view'");
  expect_error(kPreamble + "ROBOTLASER1 0 -1 2 x 30 0.01 0 2 1 2 0 0 0 0 0 0 0 0 0 0 0 0 1.5 host 1.5\n", 3,
               "field 'angular_resolution' is not a number: 'x'");
  expect_error(kPreamble + "ROBOTLASER1 0 -1 2 0.5 30 0.01 0 2 1 2 1 0 0 0 0 0 0 0 0 0 0 0 1.5 host 1.5\n", 3,
               "ROBOTLASER1: expected 2 readings, then 1 remissions");
}

TEST_F(CarmenLogFileTest, BadBeamCounts) {
  expect_error(kPreamble + "FLASER -2 1 2 0 0 0 0 0 0 1.5 host 1.5\n", 3, "field 'num_readings' is negative");
  expect_error(kPreamble + "FLASER 2.5 1 2 0 0 0 0 0 0 1.5 host 1.5\n", 3, "field 'num_readings' is not an integer");
  expect_error(kPreamble + "FLASER 99999999999999999999999 1 2\n", 3, "field 'num_readings' is not an integer");
  expect_error(kPreamble + "ROBOTLASER1 0 -1 2 0.5 30 0.01 0 x 1 2 0 0 0 0 0 0 0 0 0 0 0 0 1.5 host 1.5\n", 3,
               "field 'num_readings' is not an integer: 'x'");
}

TEST_F(CarmenLogFileTest, TypeWordAloneIsMalformed) {
  expect_error(kPreamble + "FLASER\n" + kGoodFlaser, 3, "FLASER: missing field 'num_readings'");
  expect_error(kPreamble + kGoodFlaser + "FLASER   \n", 4, "FLASER: missing field 'num_readings'");
  expect_error(kPreamble + "ROBOTLASER1\n", 3, "ROBOTLASER1: missing field 'laser_type'");
}

TEST_F(CarmenLogFileTest, TruncatedLastLine) {
  const std::string complete = kPreamble + kGoodFlaser + kGoodFlaser;
  // Cut in the readings, in the poses, right after the ipc_timestamp digits, inside the hostname.
  const std::string last = kGoodFlaser;
  for (const size_t keep : {size_t(10), size_t(20), last.find(" host") - 2, last.find(" host"),
                            last.find(" host") + 3}) {
    const std::string text = complete.substr(0, complete.size() - last.size() + keep);
    SCOPED_TRACE("last line cut to '" + last.substr(0, keep) + "'");
    expect_error(text, 4, "FLASER: truncated last line");
  }
  // The same for a ROBOTLASER1 line.
  expect_error(kPreamble + "ROBOTLASER1 0 -1 2 0.5 30 0.01 0 3 1 2", 3, "ROBOTLASER1: truncated last line");
}

TEST_F(CarmenLogFileTest, MissingFileIsParseErrorAtLineZero) {
  const std::string path = (dir_ / "does_not_exist.log").string();
  try {
    read_carmen_log(path);
    ADD_FAILURE() << "no ParseError";
  } catch (const linalg_cuda::ParseError& e) {
    EXPECT_EQ(e.line(), 0);
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
}

TEST_F(CarmenLogFileTest, CorruptOrTruncatedGzipIsParseError) {
  const std::vector<LaserScan> scans = random_scans(4);
  const std::string path = (dir_ / "good.log.gz").string();
  write_carmen_log(path, scans);
  const std::string bytes = read_bytes(path);
  ASSERT_GT(bytes.size(), 1000u);

  const std::string cut = write_text("cut.log.gz", bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW(read_carmen_log(cut), linalg_cuda::ParseError);

  std::string flipped = bytes;
  for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 64; ++i) flipped[i] = static_cast<char>(~flipped[i]);
  const std::string corrupt = write_text("corrupt.log.gz", flipped);
  EXPECT_THROW(read_carmen_log(corrupt), linalg_cuda::ParseError);
}

}  // namespace
