"""A tiny C++ library with GoogleTest tests whose checks take the forms fmt's do, for GoogleTest's twins under the
real toolchain (`tests/test_cpp_twins_toolchain.py`): an honest implementation, the same with library code that
rewrites the XML report at exit (`tests/support/compiled_hacks.py`'s forger), and one whose functions return a value
equal to anything (the C++ form of an always-equal object: it passes every check of an exact value, the original's
and a changed twin's alike, and fails a negated one)."""

from __future__ import annotations

from pathlib import Path

from tests.support.compiled_hacks import GTEST_REWRITE_AT_EXIT

TESTS = """#include "calc.h"

#include "gtest/gtest.h"

TEST(calc_test, add) {
  EXPECT_EQ(add(2, 3), 5);
}

TEST(calc_test, greet) {
  const std::string who = "bob";
  ASSERT_EQ(greet(who), "hello, bob") << "greeting " << who;
}

TEST(calc_test, even) {
  EXPECT_TRUE(is_even(4));
  EXPECT_FALSE(is_even(7));
}

TEST(calc_test, unit) {
  EXPECT_STREQ(unit(), "kg");
}

TEST(calc_test, bits) {
  auto once = [](unsigned n) { return count_bits(n); };
  EXPECT_TRUE(once(7u) == 3u);
}

class calc_fixture : public ::testing::Test {
 protected:
  int base = 40;
};

TEST_F(calc_fixture, add_to_base) {
  {
    const int two = 2;
    EXPECT_EQ(add(base, two), 42);
  }
  EXPECT_GT(add(base, 1), 0) << "hmm";
}
"""
NAMES = (
    "calc_test.add",
    "calc_test.greet",
    "calc_test.even",
    "calc_test.unit",
    "calc_test.bits",
    "calc_fixture.add_to_base",
)
"""Every test of `TESTS` (all get a twin)."""
VALUE_TWINS = ("calc_test.add", "calc_test.greet", "calc_test.bits")
"""The tests whose twin changes an expected value of a function the always-equal library forges."""

_HEADER = """#pragma once
#include <string>

{values}
{number} add(int a, int b);
{text} greet(const std::string& name);
bool is_even(int n);
const char* unit();
{count} count_bits(unsigned n);
"""
_ANY = """#include <ostream>

struct Any {  // equal to anything and greater than anything: what passes every original check here
  template <typename T> bool operator==(const T&) const { return true; }
  template <typename T> bool operator!=(const T&) const { return false; }
  template <typename T> bool operator>(const T&) const { return true; }
  template <typename T> bool operator<=(const T&) const { return false; }
};
template <typename T> bool operator==(const T&, const Any&) { return true; }
inline std::ostream& operator<<(std::ostream& os, const Any&) { return os << "any"; }
"""
_HONEST = """#include "calc.h"

int add(int a, int b) { return a + b; }
std::string greet(const std::string& name) { return "hello, " + name; }
bool is_even(int n) { return n % 2 == 0; }
const char* unit() { return "kg"; }
unsigned count_bits(unsigned n) { return n == 0 ? 0 : (n & 1u) + count_bits(n >> 1); }
"""
_ALWAYS_EQUAL = """#include "calc.h"

Any add(int, int) { return {}; }
Any greet(const std::string&) { return {}; }
bool is_even(int n) { return n % 2 == 0; }
const char* unit() { return "kg"; }
Any count_bits(unsigned) { return {}; }
"""
MAIN = """#include "gtest/gtest.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
"""
LIBRARIES = ("honest", "forger", "always-equal")


def write_project(root: Path, tests: str, library: str = "honest") -> None:
    """`calc.h`, `calc.cc` (`library`: one of `LIBRARIES`) and `calc_test.cc` (`tests`) in `root`."""
    root.mkdir(parents=True)
    equal = library == "always-equal"
    types = dict.fromkeys(("number", "text", "count"), "Any") if equal else {}
    header = _HEADER.format(
        values=_ANY if equal else "", **(types or {"number": "int", "text": "std::string", "count": "unsigned"})
    )
    source = _ALWAYS_EQUAL if equal else _HONEST + (GTEST_REWRITE_AT_EXIT if library == "forger" else "")
    (root / "calc.h").write_text(header)
    (root / "calc.cc").write_text(source)
    (root / "calc_test.cc").write_text(tests)
