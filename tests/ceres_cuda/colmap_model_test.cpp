// ColmapModel: text and binary round trips, each form read back from the other, the text COLMAP's
// own files hold, and the errors on bad models (what, which file, which line or byte).
#include <gtest/gtest.h>

#include <ceres/cost_function.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ba_test_support.h"
#include "ceres_cuda/bal_problem.h"
#include "ceres_cuda/colmap_model.h"
#include "ceres_cuda/snavely_reprojection_error.h"
#include "linalg_cuda/errors.h"

namespace {

namespace fs = std::filesystem;
using ceres_cuda::ColmapCamera;
using ceres_cuda::ColmapCameraModel;
using ceres_cuda::ColmapImage;
using ceres_cuda::ColmapModel;
using ceres_cuda::ColmapPoint3D;
using ceres_cuda::kColmapNoPoint3D;

// A fresh folder in the test's temporary folder.
std::string folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "ceres_cuda_colmap_model_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A consistent random model: cameras of every model, images with observing and unobserving points,
// points with tracks; ids not contiguous, values that need all 17 digits.
ColmapModel random_model(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ColmapModel m;
  for (int c = 0; c <= static_cast<int>(ColmapCameraModel::ThinPrismFisheye); ++c) {
    ColmapCamera camera;
    camera.model = static_cast<ColmapCameraModel>(c);
    camera.width = 640 + c;
    camera.height = 480 + c;
    for (int k = 0; k < ceres_cuda::colmap_camera_model_num_params(camera.model); ++k) camera.params.push_back(1000 * u(rng));
    m.cameras[static_cast<std::uint32_t>(3 * c + 1)] = camera;
  }
  for (std::uint32_t i = 0; i < 6; ++i) {
    ColmapImage image;
    image.qvec = {u(rng), u(rng), u(rng), u(rng)};
    const double n = std::sqrt(image.qvec[0] * image.qvec[0] + image.qvec[1] * image.qvec[1] +
                               image.qvec[2] * image.qvec[2] + image.qvec[3] * image.qvec[3]);
    for (double& q : image.qvec) q /= n;
    image.tvec = {u(rng), u(rng), 10 * u(rng)};
    image.camera_id = 3 * (i % 11) + 1;
    image.name = "frame_" + std::to_string(i) + ".jpg";
    image.points2D.resize(i == 5 ? 0 : 20);  // the last image has no points: an empty line of points
    for (auto& p : image.points2D) p = {3000 * (u(rng) + 1), 2000 * (u(rng) + 1), kColmapNoPoint3D};
    m.images[10 * i + 7] = image;
  }
  std::uint64_t next_point = 1ull << 40;  // beyond 32 bits
  for (auto& [id, image] : m.images)
    for (std::size_t k = 0; k < image.points2D.size(); k += 2) {
      ColmapPoint3D point;
      point.xyz = {u(rng), u(rng), 5 + u(rng)};
      point.rgb = {static_cast<std::uint8_t>(k), 128, 255};
      point.error = 0.5 + u(rng) / 4;
      const std::uint64_t pid = next_point++;
      point.track.push_back({id, static_cast<std::uint32_t>(k)});
      image.points2D[k].point3D_id = pid;
      m.points3D[pid] = point;
    }
  // A point seen by two images.
  auto first = m.images.begin(), second = std::next(first);
  const std::uint64_t shared = first->second.points2D[0].point3D_id;
  second->second.points2D[1].point3D_id = shared;
  m.points3D[shared].track.push_back({second->first, 1});
  m.validate();
  return m;
}

// Equal models; quaternions within qvec_tolerance (COLMAP scales every quaternion it reads to unit
// length, which can move the last bit of one that already is).
void expect_equal(const ColmapModel& a, const ColmapModel& b, double qvec_tolerance = 0) {
  ASSERT_EQ(a.cameras.size(), b.cameras.size());
  for (const auto& [id, c] : a.cameras) {
    const ColmapCamera& d = b.cameras.at(id);
    EXPECT_EQ(c.model, d.model);
    EXPECT_EQ(c.width, d.width);
    EXPECT_EQ(c.height, d.height);
    EXPECT_EQ(c.params, d.params) << "camera " << id;
  }
  ASSERT_EQ(a.images.size(), b.images.size());
  for (const auto& [id, i] : a.images) {
    const ColmapImage& j = b.images.at(id);
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(i.qvec[k], j.qvec[k], qvec_tolerance) << "image " << id;
    EXPECT_EQ(i.tvec, j.tvec);
    EXPECT_EQ(i.camera_id, j.camera_id);
    EXPECT_EQ(i.name, j.name);
    ASSERT_EQ(i.points2D.size(), j.points2D.size());
    for (std::size_t k = 0; k < i.points2D.size(); ++k) {
      EXPECT_EQ(i.points2D[k].x, j.points2D[k].x);
      EXPECT_EQ(i.points2D[k].y, j.points2D[k].y);
      EXPECT_EQ(i.points2D[k].point3D_id, j.points2D[k].point3D_id);
    }
  }
  ASSERT_EQ(a.points3D.size(), b.points3D.size());
  for (const auto& [id, p] : a.points3D) {
    const ColmapPoint3D& q = b.points3D.at(id);
    EXPECT_EQ(p.xyz, q.xyz) << "point " << id;
    EXPECT_EQ(p.rgb, q.rgb);
    EXPECT_EQ(p.error, q.error);
    ASSERT_EQ(p.track.size(), q.track.size());
    for (std::size_t k = 0; k < p.track.size(); ++k) {
      EXPECT_EQ(p.track[k].image_id, q.track[k].image_id);
      EXPECT_EQ(p.track[k].point2D_idx, q.track[k].point2D_idx);
    }
  }
}

TEST(ColmapModel, TextAndBinaryRoundTripsAgree) {
  const ColmapModel model = random_model(1);
  const std::string text = folder("text"), binary = folder("binary");
  model.write_text(text);
  model.write_binary(binary);
  const ColmapModel from_text = ColmapModel::read(text), from_binary = ColmapModel::read(binary);
  expect_equal(model, from_text);
  expect_equal(model, from_binary);
  EXPECT_EQ(model.num_observations(), from_binary.num_observations());
  // Each form written from what the other read gives the same files again.
  const std::string again = folder("again");
  from_binary.write_text(again);
  for (const char* file : {"cameras.txt", "images.txt", "points3D.txt"}) {
    std::ifstream a(text + "/" + file), b(again + "/" + file);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), std::string(std::istreambuf_iterator<char>(b), {}))
        << file;
  }
}

// The images keep the order their file lists them in (COLMAP's registration order) through reading
// and writing, in both forms; images the order leaves out follow in id order.
TEST(ColmapModel, KeepsTheImagesFileOrder) {
  ColmapModel model = random_model(2);
  std::vector<std::uint32_t> ids;
  for (const auto& [id, image] : model.images) ids.push_back(id);
  ASSERT_GE(ids.size(), 3u);
  model.image_file_order = {ids[2], 12345, ids[0], ids[2]};  // a missing id and a repeat are passed over
  std::vector<std::uint32_t> expected = {ids[2], ids[0]};
  for (std::size_t k = 1; k < ids.size(); ++k)
    if (k != 2) expected.push_back(ids[k]);
  EXPECT_EQ(model.registration_order(), expected);
  const std::string text = folder("order_text"), binary = folder("order_binary");
  model.write_text(text);
  model.write_binary(binary);
  EXPECT_EQ(ColmapModel::read(text).image_file_order, expected);
  EXPECT_EQ(ColmapModel::read(binary).image_file_order, expected);
  EXPECT_EQ(ColmapModel().registration_order(), std::vector<std::uint32_t>());
}

// COLMAP's own model_converter reads what ColmapModel writes, in either form, and what it writes
// reads back as the same model.
TEST(ColmapModel, ColmapsConverterReadsAndWritesTheSameModel) {
  if (std::system("colmap help > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "colmap not found (scripts/install_deps.sh installs Debian's)";
  const ColmapModel model = random_model(5);
  for (const char* form : {"TXT", "BIN"}) {
    const std::string ours = folder(std::string("ours_") + form), theirs = folder(std::string("theirs_") + form);
    if (std::string(form) == "TXT")
      model.write_text(ours);
    else
      model.write_binary(ours);
    // To the other form, so that COLMAP both reads one and writes the other.
    const std::string command = "QT_QPA_PLATFORM=offscreen colmap model_converter --input_path " + ours +
                                " --output_path " + theirs + " --output_type " +
                                (std::string(form) == "TXT" ? "BIN" : "TXT") + " > " + theirs + ".log 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    expect_equal(model, ColmapModel::read(theirs), 1e-15);
  }
}

TEST(ColmapModel, CameraModelsHaveColmapsNamesIdsAndCounts) {
  const struct {
    ColmapCameraModel model;
    const char* name;
    int id, params;
  } expected[] = {{ColmapCameraModel::SimplePinhole, "SIMPLE_PINHOLE", 0, 3}, {ColmapCameraModel::Pinhole, "PINHOLE", 1, 4},
                  {ColmapCameraModel::SimpleRadial, "SIMPLE_RADIAL", 2, 4},   {ColmapCameraModel::Radial, "RADIAL", 3, 5},
                  {ColmapCameraModel::OpenCV, "OPENCV", 4, 8},                {ColmapCameraModel::FullOpenCV, "FULL_OPENCV", 6, 12},
                  {ColmapCameraModel::ThinPrismFisheye, "THIN_PRISM_FISHEYE", 10, 12}};
  for (const auto& e : expected) {
    EXPECT_STREQ(ceres_cuda::colmap_camera_model_name(e.model), e.name);
    EXPECT_EQ(ceres_cuda::colmap_camera_model_num_params(e.model), e.params);
    ColmapCameraModel by_name, by_id;
    ASSERT_TRUE(ceres_cuda::colmap_camera_model_from_name(e.name, &by_name));
    ASSERT_TRUE(ceres_cuda::colmap_camera_model_from_id(e.id, &by_id));
    EXPECT_EQ(by_name, e.model);
    EXPECT_EQ(by_id, e.model);
  }
  ColmapCameraModel m;
  EXPECT_FALSE(ceres_cuda::colmap_camera_model_from_name("PINHOLE_", &m));
  EXPECT_FALSE(ceres_cuda::colmap_camera_model_from_id(11, &m));
  EXPECT_FALSE(ceres_cuda::colmap_camera_model_from_id(-1, &m));
}

// COLMAP's own text, as its documentation shows it (comments, the points line of an image that
// observes nothing, -1 ids, a quaternion that is not quite unit and is normalised).
TEST(ColmapModel, ReadsColmapsText) {
  const std::string dir = folder("colmap_text");
  write_file(dir + "/cameras.txt",
             "# Camera list with one line of data per camera:\n"
             "#   CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n"
             "# Number of cameras: 2\n"
             "1 SIMPLE_PINHOLE 3072 2304 2559.81 1536 1152\n"
             "2 OPENCV 3072 2304 2559.69 2559.69 1536 1152 -0.0218531 0.0192343 0.0001 -0.0002\r\n");
  write_file(dir + "/images.txt",
             "# Image list with two lines of data per image:\n"
             "#   IMAGE_ID, QW, QX, QY, QZ, TX, TY, TZ, CAMERA_ID, NAME\n"
             "#   POINTS2D[] as (X, Y, POINT3D_ID)\n"
             "1 0.851773 0.0165051 0.503764 -0.142941 -0.737434 1.02973 3.74354 1 P1180141.JPG\n"
             "2362.39 248.498 58396 1784.7 268.254 -1\n"
             "2 2 0 0 0 0 0 0 2 P1180142.JPG\n"
             "\n");
  write_file(dir + "/points3D.txt",
             "# 3D point list with one line of data per point:\n"
             "58396 1.67241 0.292931 0.609726 115 121 122 1.33927 1 0\n");
  const ColmapModel m = ColmapModel::read(dir);
  ASSERT_EQ(m.cameras.size(), 2u);
  EXPECT_EQ(m.cameras.at(2).model, ColmapCameraModel::OpenCV);
  EXPECT_EQ(m.cameras.at(2).params[7], -0.0002);
  ASSERT_EQ(m.images.size(), 2u);
  EXPECT_EQ(m.images.at(1).points2D.size(), 2u);
  EXPECT_EQ(m.images.at(1).points2D[1].point3D_id, kColmapNoPoint3D);
  EXPECT_TRUE(m.images.at(2).points2D.empty());
  EXPECT_EQ(m.images.at(2).qvec[0], 1.0);
  const double norm = std::hypot(std::hypot(m.images.at(1).qvec[0], m.images.at(1).qvec[1]),
                                 std::hypot(m.images.at(1).qvec[2], m.images.at(1).qvec[3]));
  EXPECT_NEAR(norm, 1.0, 1e-15);
  EXPECT_EQ(m.points3D.at(58396).rgb[2], 122);
  EXPECT_EQ(m.num_observations(), 1u);
}

// The message of the error reading `dir` throws, and whether it was a ParseError.
std::string read_error(const std::string& dir, bool* parse_error = nullptr) {
  try {
    ColmapModel::read(dir);
  } catch (const linalg_cuda::ParseError& e) {
    if (parse_error) *parse_error = true;
    return e.what();
  } catch (const linalg_cuda::Error& e) {
    if (parse_error) *parse_error = false;
    return e.what();
  }
  return "";
}

std::string read_error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const linalg_cuda::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ColmapModel, BadTextSaysWhichFileLineAndWhat) {
  const ColmapModel good = random_model(2);
  struct Case {
    const char* file;
    std::string replace, with, expected;
  };
  const std::string first_image = std::to_string(good.images.begin()->first);
  const std::vector<Case> cases = {
      {"cameras.txt", "SIMPLE_PINHOLE", "SIMPLE_PINHOL", "cameras.txt:4: camera 1: unknown camera model \"SIMPLE_PINHOL\""},
      {"cameras.txt", "PINHOLE 640 480", "PINHOLE 640 480 7", "takes 3 parameters, the line has 4"},
      {"cameras.txt", "PINHOLE 640 480", "PINHOLE -640 480", "expected a width (a whole number"},
      {"images.txt", "frame_0.jpg", "frame_0.jpg extra", "images.txt:5: expected IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME, found 11"},
      {"images.txt", " 1 frame_0.jpg", " 99 frame_0.jpg", "names camera 99, which the model does not have"},
      {"points3D.txt", " 128 255 ", " 128 256 ", "expected a colour value (a whole number from 0 to 255), found \"256\""},
      {"points3D.txt", "\n" + std::to_string(1ull << 40) + " ", "\n" + std::to_string(1ull << 40) + "x ",
       "expected a 3-D point id"},
  };
  for (const Case& c : cases) {
    const std::string dir = folder("bad_text");
    good.write_text(dir);
    std::ifstream in(dir + "/" + c.file);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    const std::size_t at = text.find(c.replace);
    ASSERT_NE(at, std::string::npos) << c.replace;
    text.replace(at, c.replace.size(), c.with);
    write_file(dir + "/" + c.file, text);
    bool parse_error = false;
    const std::string message = read_error(dir, &parse_error);
    EXPECT_TRUE(parse_error) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << "got: " << message << "\nexpected: " << c.expected;
    EXPECT_NE(message.find(c.file), std::string::npos) << message;
  }
  // Non-finite values, a duplicate, a truncated image, a missing file.
  const std::string dir = folder("bad_text_more");
  write_file(dir + "/cameras.txt", "1 PINHOLE 10 10 nan 1 1 1\n");
  write_file(dir + "/images.txt", "");
  write_file(dir + "/points3D.txt", "");
  EXPECT_NE(read_error(dir).find("cameras.txt:1: a parameter is \"nan\", not a finite number"), std::string::npos);
  write_file(dir + "/cameras.txt", "1 PINHOLE 10 10 1 1 1 1\n1 PINHOLE 10 10 1 1 1 1\n");
  EXPECT_NE(read_error(dir).find("cameras.txt:2: camera 1 again"), std::string::npos);
  write_file(dir + "/cameras.txt", "1 PINHOLE 10 10 1 1 1 1\n");
  write_file(dir + "/images.txt", "# c\n4 1 0 0 0 0 0 0 1 a.png\n");
  EXPECT_NE(read_error(dir).find("images.txt:2: image 4 has no line of points"), std::string::npos);
  write_file(dir + "/images.txt", "4 1 0 0 0 0 0 0 1 a\rb.png\n1 2 -1\n");
  EXPECT_NE(read_error(dir).find("images.txt:1: image 4: its name holds a carriage return"), std::string::npos);
  write_file(dir + "/images.txt", "4 0 0 0 0 0 0 0 1 a.png\n1 2 -1\n");
  EXPECT_NE(read_error(dir).find("images.txt:1: image 4: its quaternion has no length"), std::string::npos);
  write_file(dir + "/images.txt", "4 1 0 0 0 0 0 0 1 a.png\n1 2 5\n");
  EXPECT_NE(read_error(dir).find("images.txt:1: image 4's point 0 observes 3-D point 5, which the model does not have"),
            std::string::npos);
  write_file(dir + "/points3D.txt", "5 0 0 1 0 0 0 1\n");
  EXPECT_NE(read_error(dir).find("image 4's point 0 observes 3-D point 5, whose track does not list it"), std::string::npos);
  write_file(dir + "/points3D.txt", "5 0 0 1 0 0 0 1 4 0 4 0\n");
  EXPECT_NE(read_error(dir).find("points3D.txt:1: 3-D point 5's track names image 4's point 0 twice"), std::string::npos);
  write_file(dir + "/points3D.txt", "5 0 0 1 0 0 0 1 4 1\n");
  EXPECT_NE(read_error(dir).find("3-D point 5's track names image 4's point 1, which is not there (the image has 1)"),
            std::string::npos);
  fs::remove(dir + "/points3D.txt");
  bool parse_error = true;
  EXPECT_NE(read_error(dir, &parse_error).find("holds no COLMAP model"), std::string::npos);
  EXPECT_FALSE(parse_error);
  EXPECT_NE(read_error_of([&] { ColmapModel::read_text(dir); }).find("points3D.txt: cannot open"), std::string::npos);
  EXPECT_NE(read_error(dir + "/nothing", &parse_error).find("not a folder"), std::string::npos);
}

TEST(ColmapModel, BadBinarySaysWhichFileByteAndWhat) {
  const ColmapModel good = random_model(3);
  const std::string dir = folder("bad_binary");
  auto bytes_of = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  auto rewrite = [&](const char* file, const std::function<void(std::string*)>& edit) {
    good.write_binary(dir);
    std::string bytes = bytes_of(dir + "/" + file);
    edit(&bytes);
    write_file(dir + "/" + file, bytes);
    return read_error(dir);
  };
  // A count the file cannot hold is refused before anything is reserved.
  EXPECT_NE(rewrite("points3D.bin", [](std::string* b) { std::memset(&(*b)[0], 0xff, 7); })
                .find("points3D.bin: byte 0: declares 72057594037927935 3-D points, which the"),
            std::string::npos);
  EXPECT_NE(rewrite("cameras.bin", [](std::string* b) { (*b)[12] = 42; }).find("cameras.bin: byte 8: camera 1: unknown camera model id 42"),
            std::string::npos);
  EXPECT_NE(rewrite("images.bin", [](std::string* b) { b->resize(b->size() - 5); }).find("images.bin: byte"),
            std::string::npos);
  EXPECT_NE(rewrite("images.bin", [](std::string* b) { b->resize(b->size() - 5); }).find("the file ends where"),
            std::string::npos);
  EXPECT_NE(rewrite("cameras.bin", [](std::string* b) { b->append("\0garbage", 8); })
                .find("8 bytes follow the last camera; expected the file's end"),
            std::string::npos);
  // A NaN parameter: the first camera's first parameter, after its 24-byte header.
  EXPECT_NE(rewrite("cameras.bin",
                    [](std::string* b) {
                      const double nan = std::nan("");
                      std::memcpy(&(*b)[8 + 24], &nan, 8);
                    })
                .find("cameras.bin: byte 32: a camera parameter is not a finite number"),
            std::string::npos);
  // A track naming an image the model does not have: the point's record is named.
  EXPECT_NE(rewrite("points3D.bin",
                    [](std::string* b) {
                      const std::uint32_t missing = 5;
                      std::memcpy(&(*b)[8 + 51], &missing, 4);
                    })
                .find("points3D.bin: byte 8: 3-D point 1099511627776's track names image 5, which the model does not have"),
            std::string::npos);
}

// The binary reader parses records on all threads, yet reports what a sequential read meets first:
// the first bad record in file order, and within a record its values before its id's repetition. Enough
// points that they are parsed and sorted in many parts; points listed in no order, as COLMAP's own files
// list them, read as the same model.
TEST(ColmapModel, BinaryReadReportsTheFirstBadRecordInFileOrder) {
  ceres_cuda::SyntheticBalOptions options;
  options.num_cameras = 8;
  options.num_points = 40000;
  options.observations_per_point = 2;
  const ColmapModel good = ceres_cuda::colmap_model_from_bal(ceres_cuda::make_synthetic_bal(options));
  const std::string dir = folder("first_bad_binary");
  good.write_binary(dir);
  std::ifstream in(dir + "/points3D.bin", std::ios::binary);
  const std::string points((std::istreambuf_iterator<char>(in)), {});
  // Where each point's record starts: id, xyz, colour, error, then the track's length and elements.
  std::vector<std::size_t> start;
  for (std::size_t at = 8; at < points.size();) {
    start.push_back(at);
    std::uint64_t length;
    std::memcpy(&length, &points[at + 43], 8);
    at += 51 + 8 * length;
  }
  ASSERT_EQ(start.size(), good.points3D.size());
  auto record = [&](std::size_t i) {
    return points.substr(start[i], (i + 1 < start.size() ? start[i + 1] : points.size()) - start[i]);
  };
  auto read_with = [&](const std::string& bytes) {
    write_file(dir + "/points3D.bin", bytes);
    return read_error(dir);
  };

  std::string reversed = points.substr(0, 8);
  for (std::size_t i = start.size(); i-- > 0;) reversed += record(i);
  write_file(dir + "/points3D.bin", reversed);
  expect_equal(good, ColmapModel::read_binary(dir));

  const double nan = std::nan("");
  auto with_nan = [&](std::string bytes, std::size_t i, std::size_t field) {
    std::memcpy(&bytes[start[i] + field], &nan, 8);
    return bytes;
  };
  auto with_id_of = [&](std::string bytes, std::size_t i, std::size_t other) {
    bytes.replace(start[i], 8, points, start[other], 8);
    return bytes;
  };
  auto at_byte = [](std::size_t byte, const std::string& what) {
    return "points3D.bin: byte " + std::to_string(byte) + ": " + what;
  };
  const std::string nan_coordinate = "a coordinate is not a finite number";
  // Two non-finite values and a repeated id after them: the first value in file order.
  EXPECT_NE(read_with(with_id_of(with_nan(with_nan(points, 30000, 35), 20000, 8), 35000, 100))
                .find(at_byte(start[20000] + 8, nan_coordinate)),
            std::string::npos);
  EXPECT_NE(read_with(with_nan(with_nan(points, 39000, 8), 25000, 35))
                .find(at_byte(start[25000] + 35, "an error is not a finite number")),
            std::string::npos);
  // A repeated id before them: the repetition, at its second use.
  const std::string again = "3-D point " + std::to_string(good.points3D.begin()->first + 5) + " again";
  EXPECT_NE(read_with(with_nan(with_id_of(points, 10000, 5), 20000, 8)).find(at_byte(start[10000], again)),
            std::string::npos);
  EXPECT_NE(read_with(with_id_of(with_id_of(points, 30000, 7), 10000, 5)).find(at_byte(start[10000], again)),
            std::string::npos);
  // The repeating record's own bad value comes before its id's check.
  EXPECT_NE(read_with(with_nan(with_id_of(points, 10000, 5), 10000, 8))
                .find(at_byte(start[10000] + 8, nan_coordinate)),
            std::string::npos);
  // A file that ends inside its last record: a bad value before it is reported first.
  const std::string cut = points.substr(0, start.back() + 20);
  EXPECT_NE(read_with(with_nan(cut, 1000, 8)).find(at_byte(start[1000] + 8, nan_coordinate)), std::string::npos);
  EXPECT_NE(read_with(cut).find(at_byte(start.back() + 16, "the file ends where a coordinate was expected")),
            std::string::npos);
}

TEST(ColmapModel, WritersRefuseNamesTheirFormCannotHold) {
  ColmapModel m = random_model(4);
  m.images.begin()->second.name = "two words.jpg";
  const std::string dir = folder("names");
  EXPECT_THROW(m.write_text(dir), linalg_cuda::InvalidArgument);
  m.write_binary(dir);  // the binary form holds blanks
  EXPECT_EQ(ColmapModel::read(dir).images.begin()->second.name, "two words.jpg");
  EXPECT_THROW(ColmapModel().write_text("/nonexistent/folder"), linalg_cuda::Error);
}

// COLMAP's RADIAL camera: X_cam = R(qvec) X + t, (u, v) = f (1 + k1 r^2 + k2 r^4) (x, y) + (cx, cy)
// with (x, y) = X_cam.xy / X_cam.z, as COLMAP's RadialCameraModel and its pose convention define it.
std::array<double, 2> colmap_radial_projection(const ColmapImage& image, const ColmapCamera& camera,
                                               const std::array<double, 3>& x) {
  const double w = image.qvec[0], a = image.qvec[1], b = image.qvec[2], c = image.qvec[3];
  const double r[9] = {1 - 2 * (b * b + c * c), 2 * (a * b - w * c),     2 * (a * c + w * b),
                       2 * (a * b + w * c),     1 - 2 * (a * a + c * c), 2 * (b * c - w * a),
                       2 * (a * c - w * b),     2 * (b * c + w * a),     1 - 2 * (a * a + b * b)};
  double p[3];
  for (int i = 0; i < 3; ++i) p[i] = r[3 * i] * x[0] + r[3 * i + 1] * x[1] + r[3 * i + 2] * x[2] + image.tvec[i];
  const double u = p[0] / p[2], v = p[1] / p[2], r2 = u * u + v * v;
  const double radial = 1 + camera.params[3] * r2 + camera.params[4] * r2 * r2;
  return {camera.params[0] * radial * u + camera.params[1], camera.params[0] * radial * v + camera.params[2]};
}

// Every observation's COLMAP reprojection error is BAL's (y negated), and the point's error the mean.
void expect_colmap_reprojects_as_bal(const ceres_cuda::BALProblem& bal) {
  const ColmapModel model = ceres_cuda::colmap_model_from_bal(bal);
  model.validate();
  ASSERT_EQ(model.images.size(), static_cast<std::size_t>(bal.num_cameras()));
  ASSERT_EQ(model.points3D.size(), static_cast<std::size_t>(bal.num_points()));
  ASSERT_EQ(model.num_observations(), static_cast<std::size_t>(bal.num_observations()));
  std::vector<std::size_t> next(bal.num_cameras(), 0);
  double worst = 0;
  for (int k = 0; k < bal.num_observations(); ++k) {
    const int i = bal.camera_index()[k], j = bal.point_index()[k];
    const ColmapImage& image = model.images.at(i + 1);
    const ceres_cuda::ColmapImagePoint& seen = image.points2D.at(next[i]++);
    ASSERT_EQ(seen.point3D_id, static_cast<std::uint64_t>(j) + 1);
    const ColmapCamera& camera = model.cameras.at(image.camera_id);
    ASSERT_EQ(camera.model, ColmapCameraModel::Radial);
    const auto uv = colmap_radial_projection(image, camera, model.points3D.at(j + 1).xyz);
    // BAL's residual through the library's cost function.
    double residual[2];
    const double* c = bal.cameras().data() + 9 * i;
    const double* x = bal.points().data() + 3 * j;
    std::unique_ptr<ceres::CostFunction> cost(ceres_cuda::SnavelyReprojectionError::Create(
        bal.observations()[2 * k], bal.observations()[2 * k + 1]));
    const double* parameters[2] = {c, x};
    ASSERT_TRUE(cost->Evaluate(parameters, residual, nullptr));
    const double scale = 1 + std::fabs(uv[0]) + std::fabs(uv[1]);
    worst = std::max(worst, std::fabs((uv[0] - seen.x) - residual[0]) / scale);
    worst = std::max(worst, std::fabs((uv[1] - seen.y) + residual[1]) / scale);
    EXPECT_GE(seen.x, 0);
    EXPECT_GE(seen.y, 0);
    EXPECT_LE(seen.x, camera.width);
    EXPECT_LE(seen.y, camera.height);
  }
  EXPECT_LT(worst, 1e-12);
}

TEST(ColmapModel, FromBalReprojectsAsBal) {
  ceres_cuda::SyntheticBalOptions options;
  options.num_cameras = 12;
  options.num_points = 400;
  expect_colmap_reprojects_as_bal(ceres_cuda::make_synthetic_bal(options));
  const std::string path = ba_test::bal_path("problem-49-7776-pre.txt");
  if (!fs::exists(path)) GTEST_SKIP() << path << " not found (set CUDA_SOLVERS_DATA)";
  const ceres_cuda::BALProblem bal = ceres_cuda::BALProblem::read(path);
  expect_colmap_reprojects_as_bal(bal);
  // Written and read back in both forms, the same model.
  const ColmapModel model = ceres_cuda::colmap_model_from_bal(bal);
  const std::string dir = folder("from_bal");
  model.write_binary(dir);
  expect_equal(model, ColmapModel::read_binary(dir));
}

}  // namespace
