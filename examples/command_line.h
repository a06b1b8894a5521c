#pragma once
// The command-line conventions every example shares: --help prints the usage and exits 0; a value
// follows its flag ("--flag value" or "--flag=value"); an unknown option, a missing value or a
// malformed number prints what is wrong and the usage, and exits 2.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace examples {

class CommandLine {
 public:
  // value_flags take a value ("--flag value"); switches stand alone ("--flag") and read as "1".
  CommandLine(std::string program, const char* usage, std::vector<std::string> value_flags,
              std::vector<std::string> switches = {})
      : program_(std::move(program)), usage_(usage), value_flags_(std::move(value_flags)), switches_(std::move(switches)) {}

  // flag -> value for every flag given (exits on --help or a bad option).
  std::map<std::string, std::string> parse(int argc, char** argv) const {
    std::map<std::string, std::string> values;
    for (int i = 1; i < argc; ++i) {
      std::string flag = argv[i];
      const std::size_t equals = flag.find('=');
      if (flag.compare(0, 2, "--") == 0 && equals != std::string::npos) {  // "--flag=value", as COLMAP's flags
        const std::string name = flag.substr(0, equals);
        if (std::find(value_flags_.begin(), value_flags_.end(), name) == value_flags_.end())
          fail("unknown option " + name);
        values[name] = flag.substr(equals + 1);
        continue;
      }
      if (flag == "--help" || flag == "-h") {
        std::cout << usage_;
        std::exit(0);
      }
      if (std::find(switches_.begin(), switches_.end(), flag) != switches_.end()) {
        values[flag] = "1";
        continue;
      }
      if (std::find(value_flags_.begin(), value_flags_.end(), flag) == value_flags_.end()) fail("unknown option " + flag);
      if (i + 1 >= argc) fail("missing value after " + flag);
      values[flag] = argv[++i];
    }
    return values;
  }

  [[noreturn]] void fail(const std::string& message) const {
    std::cerr << program_ << ": " << message << "\n\n" << usage_;
    std::exit(2);
  }

  // A number in [low, high] (exits with the usage otherwise).
  double number(const std::string& flag, const std::string& text, double low, double high) const {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(value >= low && value <= high))
      fail(flag + " expects a number in [" + trimmed(low) + ", " + trimmed(high) + "], got '" + text + "'");
    return value;
  }
  int integer(const std::string& flag, const std::string& text, int low, int high) const {
    const double value = number(flag, text, low, high);
    if (value != static_cast<int>(value)) fail(flag + " expects a whole number, got '" + text + "'");
    return static_cast<int>(value);
  }

 private:
  static std::string trimmed(double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  std::string program_;
  const char* usage_;
  std::vector<std::string> value_flags_;
  std::vector<std::string> switches_;
};

// The items of a list such as "a:b:c" (empty items dropped), for flags that take several folders.
inline std::vector<std::string> split(const std::string& list, char separator) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, separator))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace examples
