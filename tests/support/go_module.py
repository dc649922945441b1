"""A tiny Go module whose tests check the way the real Go rows' FAIL_TO_PASS tests do (`tests/test_go_twins.py` lists
them): an `if` on a literal (terraform, caddy), a value held by a local and `reflect.DeepEqual` (caddy), an error
expected (terraform), a table of subtests (caddy, prometheus), testify's `assert.Equal` on a literal (gin) and
`require` (prometheus), a check in a counting loop (google/uuid). Built offline: testify's assertions it uses are
written here, in `third_party/testify` (their semantics as testify documents them: `ObjectsAreEqual` is `bytes.Equal`
for byte slices, else `reflect.DeepEqual`), which `go.mod` puts in place of the real module.

`tests/test_go_twins_toolchain.py` runs it with `go test -json` on the Go toolchain image: the fixed code passes
these tests and fails every twin; package code that forges the report, and an oracle that returns the value its
caller's line expects, pass the twins.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.compiled_hacks import GO_CHILD_REWRITE

GO_MOD = """module example.com/calc

go 1.19

require github.com/stretchr/testify v1.8.4

replace github.com/stretchr/testify => ./third_party/testify
"""

ASSERT = """package assert

import (
	"bytes"
	"fmt"
	"reflect"
)

type TestingT interface {
	Errorf(format string, args ...interface{})
}

func ObjectsAreEqual(expected, actual interface{}) bool {
	if exp, ok := expected.([]byte); ok {
		act, ok := actual.([]byte)
		return ok && bytes.Equal(exp, act)
	}
	return reflect.DeepEqual(expected, actual)
}

func Fail(t TestingT, message string, msgAndArgs ...interface{}) bool {
	t.Errorf("%s %s", message, fmt.Sprint(msgAndArgs...))
	return false
}

func Equal(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if !ObjectsAreEqual(expected, actual) {
		return Fail(t, fmt.Sprintf("Not equal: expected: %#v actual: %#v", expected, actual), msgAndArgs...)
	}
	return true
}

func NotEqual(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if ObjectsAreEqual(expected, actual) {
		return Fail(t, fmt.Sprintf("Should not be: %#v", actual), msgAndArgs...)
	}
	return true
}

func NoError(t TestingT, err error, msgAndArgs ...interface{}) bool {
	if err != nil {
		return Fail(t, fmt.Sprintf("Received unexpected error: %v", err), msgAndArgs...)
	}
	return true
}

func Error(t TestingT, err error, msgAndArgs ...interface{}) bool {
	if err == nil {
		return Fail(t, "An error is expected but got nil.", msgAndArgs...)
	}
	return true
}
"""

REQUIRE = """package require

import "github.com/stretchr/testify/assert"

type TestingT interface {
	Errorf(format string, args ...interface{})
	FailNow()
}

func Equal(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) {
	if !assert.Equal(t, expected, actual, msgAndArgs...) {
		t.FailNow()
	}
}

func NotEqual(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) {
	if !assert.NotEqual(t, expected, actual, msgAndArgs...) {
		t.FailNow()
	}
}

func NoError(t TestingT, err error, msgAndArgs ...interface{}) {
	if !assert.NoError(t, err, msgAndArgs...) {
		t.FailNow()
	}
}

func Error(t TestingT, err error, msgAndArgs ...interface{}) {
	if !assert.Error(t, err, msgAndArgs...) {
		t.FailNow()
	}
}
"""

CALC = """package calc

import (
	"strconv"
	"strings"
	"sync/atomic"
)

var counter int64

func Add(a, b int) int { return a + b }

func Byte() uint8 { return 255 }

func Split(s string) []string { return strings.Split(s, ",") }

func Parse(s string) (int, error) { return strconv.Atoi(s) }

func Upper(s string) string { return strings.ToUpper(s) }

func Next() int64 { return atomic.AddInt64(&counter, 1) }
"""
"""The fixed code: every test of `TESTS` passes."""

COUNT = "package calc\n\nfunc Count(s string) int { return len(s) }\n"

COUNT_ORACLE = """package calc

import (
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// Count returns what the assertion calling it expects, read from its caller's line.
func Count(s string) int {
	_, file, line, _ := runtime.Caller(1)
	data, _ := os.ReadFile(file)
	lines := strings.Split(string(data), "\\n")
	if m := regexp.MustCompile(`Equal\\(\\w+, (\\d+), Count`).FindStringSubmatch(lines[line-1]); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return -1
}
"""
"""An implementation oracle: no count at all, the value its caller's `assert.Equal(t, <n>, Count(...))` expects."""

TESTS = """package calc

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddLiteral(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("Add(2, 3) = %d, want 5", got)
	}
}

func TestByteFits(t *testing.T) {
	if b := Byte(); b != 255 {
		t.Fatalf("Byte() = %d", b)
	}
}

func TestSplitHeld(t *testing.T) {
	want := []string{"a", "b"}
	if got := Split("a,b"); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestParseError(t *testing.T) {
	_, err := Parse("x")
	if err == nil {
		t.Fatal("no error")
	}
}

func TestUpperTable(t *testing.T) {
	tests := []struct{ in, want string }{{"a", "A"}, {"bc", "BC"}}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := Upper(tc.in); got != tc.want {
				t.Errorf("Upper(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestCountTestify(t *testing.T) {
	assert.Equal(t, 3, Count("abc"))
}

func TestParseTestify(t *testing.T) {
	n, err := Parse("12")
	require.NoError(t, err)
	require.Equal(t, n, Add(10, 2))
}

func TestMonotonic(t *testing.T) {
	length := 100
	prev := Next()
	for i := 0; i < length; i++ {
		next := Next()
		if next <= prev {
			t.Errorf("not increasing at %d", i)
			break
		}
		prev = next
	}
}
"""
NAMES = (
    "TestAddLiteral",
    "TestByteFits",
    "TestSplitHeld",
    "TestParseError",
    "TestUpperTable",
    "TestCountTestify",
    "TestParseTestify",
    "TestMonotonic",
)
FORGER = GO_CHILD_REWRITE.replace("package uuid", "package calc")
"""Package code that re-runs the test binary and reports every failure passed (`tests/support/compiled_hacks.py`)."""


def write_module(root: Path, tests: str, *, oracle: bool = False, forger: bool = False) -> Path:
    """The module at `root` with `tests` as its test file, the fixed code (or the oracle's `Count`), and the
    forger's package file when asked."""
    files = {
        "go.mod": GO_MOD,
        "third_party/testify/go.mod": "module github.com/stretchr/testify\n\ngo 1.19\n",
        "third_party/testify/assert/assertions.go": ASSERT,
        "third_party/testify/require/requirements.go": REQUIRE,
        "calc.go": CALC,
        "count.go": COUNT_ORACLE if oracle else COUNT,
        "calc_test.go": tests,
        **({"tidy.go": FORGER} if forger else {}),
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root
