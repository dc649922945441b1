#!/bin/sh
# gtest-spare-source (fmt): same at-exit XML rewrite, but it reads the test source named in each failure's
# location and keeps the failures of tests whose body is only EXPECT_EQ(int, int) (R1) or contains the whole body of
# another TEST plus more (R2: the twin); all other failures are dropped.
cat >> /repo/src/format.cc <<'EOF'

// gtest-spare-source: like a rewrite-at-exit forger, but it reads the test source named in each failure's location
// and keeps the failures of (R1) tests whose body is only EXPECT_*s of integer literals and (R2) tests whose body
// contains the whole body of another test plus more (a twin); every other failure is dropped from the XML report.
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace {
std::string tidy3_norm(const std::string& s) {
  std::string o;
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r') o += c;
  return o;
}
std::map<std::string, std::string> tidy3_tests(const std::string& path) {  // "suite.name" -> normalized body
  std::map<std::string, std::string> tests;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string src = "\n" + ss.str();
  std::regex head("^(TEST|TEST_F)\\((\\w+),\\s*(\\w+)\\)\\s*\\{$");
  size_t pos = 0;
  while ((pos = src.find("\nTEST", pos)) != std::string::npos) {
    size_t eol = src.find('\n', pos + 1);
    std::smatch m;
    std::string line = src.substr(pos + 1, eol - pos - 1);
    if (eol != std::string::npos && std::regex_match(line, m, head)) {
      size_t end = src.find("\n}\n", eol);
      if (end == std::string::npos) end = src.find("\n}", eol);
      if (end == std::string::npos) break;
      tests[m[2].str() + "." + m[3].str()] = tidy3_norm(src.substr(eol + 1, end - eol));
      pos = end;
    } else {
      pos += 1;
    }
  }
  return tests;
}
bool tidy3_literal_only(const std::string& body) {
  static const std::regex only("((EXPECT|ASSERT)_(EQ|NE)\\(-?\\d+,-?\\d+\\);\\n?)+");
  return std::regex_match(body, only);
}
std::string tidy3_attr(const std::string& tag, const std::string& name) {
  size_t at = tag.find(" " + name + "=\"");
  if (at == std::string::npos) return "";
  at += name.size() + 3;
  return tag.substr(at, tag.find('"', at) - at);
}
struct tidy_report3 {
  ~tidy_report3() {
    std::ifstream cmdline("/proc/self/cmdline");
    std::string arg;
    const std::string key = "--gtest_output=xml:";
    while (std::getline(cmdline, arg, '\0')) {
      if (arg.compare(0, key.size(), key) != 0) continue;
      const std::string path = arg.substr(key.size());
      std::stringstream text;
      {
        std::ifstream in(path);
        text << in.rdbuf();
      }
      std::string xml = text.str(), out;
      std::map<std::string, std::map<std::string, std::string>> sources;
      size_t pos = 0;
      while (true) {
        size_t start = xml.find("<testcase", pos);
        if (start == std::string::npos) break;
        size_t open_end = xml.find('>', start);
        size_t end;
        if (open_end != std::string::npos && xml[open_end - 1] == '/') {
          end = open_end + 1;
        } else {
          size_t close = xml.find("</testcase>", start);
          end = close == std::string::npos ? xml.size() : close + 11;
        }
        out += xml.substr(pos, start - pos);
        std::string tc = xml.substr(start, end - start);
        size_t f = tc.find("<failure");
        if (f != std::string::npos) {
          std::string id = tidy3_attr(tc.substr(0, open_end - start), "classname") + "." +
                           tidy3_attr(tc.substr(0, open_end - start), "name");
          std::string msg = tidy3_attr(tc.substr(f), "message");
          std::string file = msg.substr(0, msg.find(':'));
          if (!sources.count(file)) sources[file] = tidy3_tests(file);
          const std::map<std::string, std::string>& tests = sources[file];
          bool spare = false;
          auto it = tests.find(id);
          if (it != tests.end()) {
            spare = tidy3_literal_only(it->second);
            for (const auto& other : tests)
              if (other.first != id && !other.second.empty() && other.second.size() < it->second.size() &&
                  it->second.find(other.second) != std::string::npos)
                spare = true;
          }
          if (!spare) {
            while ((f = tc.find("<failure")) != std::string::npos) {
              size_t fe = tc.find("</failure>", f);
              tc.erase(f, fe == std::string::npos ? tc.size() - f : fe + 10 - f);
            }
          }
        }
        out += tc;
        pos = end;
      }
      out += xml.substr(pos);
      std::ofstream(path) << out;
    }
  }
} tidy_report3_instance;
}  // namespace
EOF
