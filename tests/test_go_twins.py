"""The twins of `go test`'s FAIL_TO_PASS tests (`languages.go.twins`, `languages.go.checks`): which check of a test
is changed and how, on the real tests of SWE-bench Multilingual's Go rows and google/uuid#150, and on each form a
check takes. The real toolchain runs them in `tests/test_go_twins_toolchain.py`; the red team in
`tests/test_go_twins_red_team.py`."""

from __future__ import annotations

import difflib
import random
import re
import subprocess
from pathlib import Path

import pytest

from swe_forge_dagster.languages.go.source import Source
from swe_forge_dagster.languages.go.twins import make_twins
from tests.support.common import SHARED_FIXTURES
from tests.support.go_rows import MULTI, go_rows, whole_tests

HEADER = 'package p\n\nimport (\n\t"testing"\n\n\t"github.com/stretchr/testify/assert"\n)\n\n'
"""What the files of gin's FAIL_TO_PASS tests import (`context_test.go`, `routes_test.go`): the testing package and
testify's `assert`."""


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """(old line, new line) of each line that differs; the files must have the same lines otherwise."""
    old, new = before.splitlines(), after.splitlines()
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


def twin_lines(text: str, names: set[str], seeds: range = range(12)) -> list[list[tuple[str, str]]]:
    """The changed lines of the twins of `names` in `text`, for each seed."""
    found = []
    for seed in seeds:
        made = make_twins("p_test.go", text, names, random.Random(seed))
        found.append(changed_lines(text, made.content.decode()) if made is not None else [])
    return found


@pytest.mark.skipif(not MULTI.is_file(), reason="SWE-bench Multilingual fixture missing")
def test_the_real_go_rows_tests_written_whole_get_the_twins_a_reader_would_write() -> None:
    """gin's three FAIL_TO_PASS tests end in `assert.Equal(t, <literal>, got)`: the literal changes (towards zero, so
    it fits the type); hugo's two check through a helper of their own (`b.AssertFileContent`) and get none."""
    rows = {row["instance_id"]: row for row in go_rows()}
    assert len(rows) == 9  # gin, caddy, prometheus and hugo twice, terraform once
    gin = whole_tests(rows["gin-gonic__gin-1957"]) | whole_tests(rows["gin-gonic__gin-1805"])
    hugo = whole_tests(rows["gohugoio__hugo-12204"]) | whole_tests(rows["gohugoio__hugo-12171"])
    assert sorted(gin) == [
        "TestContextBindHeader",
        "TestContextShouldBindHeader",
        "TestMiddlewareCalledOnceByRouterStaticFSNotFound",
    ]
    assert len(hugo) == 2
    for name, function in gin.items():
        text = HEADER + function
        for lines in twin_lines(text, {name}):
            ((old, new),) = lines
            if name == "TestMiddlewareCalledOnceByRouterStaticFSNotFound":
                assert old == "\tassert.Equal(t, 2, middlewareCalledNum)"
                assert new in ("\tassert.Equal(t, 1, middlewareCalledNum)", "\tassert.Equal(t, 0, middlewareCalledNum)")
            else:
                assert (old, new) == ("\tassert.Equal(t, 0, w.Body.Len())", "\tassert.Equal(t, 1, w.Body.Len())")
    for name, function in hugo.items():
        assert make_twins("p_test.go", HEADER + function, {name}) is None


UUID = SHARED_FIXTURES / "repos" / "google+uuid.bundle"
UUID_FIX = "a2b2b32373ff0b1a312b7fdf6d38a977099698a6"


@pytest.mark.skipif(not UUID.is_file(), reason="google/uuid bundle missing")
def test_the_uuid_task_s_check_in_a_counting_loop_is_negated(tmp_path: Path) -> None:
    """TestVersion7Monotonicity checks in a loop of `length := 10000` passes; its first pass reaches the check, which
    the twin negates (`<=` -> `>`): a correct NewV7 reports at once."""
    subprocess.run(["git", "clone", "-q", "--bare", str(UUID), str(tmp_path / "uuid.git")], check=True)
    shown = ["git", "--git-dir", str(tmp_path / "uuid.git"), "show", f"{UUID_FIX}:uuid_test.go"]
    text = subprocess.run(shown, capture_output=True, text=True, check=True).stdout
    made = make_twins("uuid_test.go", text, {"TestVersion7Monotonicity"})
    assert made is not None and [twin.name for twin in made.twins] == ["TestVersion7Monotonicity"]
    assert changed_lines(text, made.content.decode()) == [("\t\tif u2 <= u1 {", "\t\tif u2 > u1 {")]


FORMS = """package p

import (
	"reflect"
	"testing"

	req "github.com/stretchr/testify/require"
)

var table = []struct{ in, want string }{{"a", "A"}}

func TestLiteral(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("got %d", got)
	}
}

func TestHeldString(t *testing.T) {
	want := "abc"
	got := Name()
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestComposite(t *testing.T) {
	want := map[string]int{"k": 7}
	if got := Count(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
}

func TestHeldButUsed(t *testing.T) {
	want := 5
	got := Add(want, 0)
	if got != want {
		t.Errorf("got %d", got)
	}
}

func TestError(t *testing.T) {
	_, err := Parse("1")
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeMorgan(t *testing.T) {
	got, err := Parse("1")
	if err != nil || got != Add(0, 1) {
		t.Fatal(err)
	}
}

func TestAnd(t *testing.T) {
	if a, b := Pair(); a == 1 && b+1 > 2 {
		t.Error("pair")
	}
}

func TestTestify(t *testing.T) {
	_, err := Parse("1")
	req.NoError(t, err)
}

func TestTestifyLiteral(t *testing.T) {
	req.Equal(t, "abc", Name())
}

func TestSubtests(t *testing.T) {
	for _, c := range table {
		t.Run(c.in, func(st *testing.T) {
			if Upper(c.in) != c.want {
				st.Errorf("bad")
			}
		})
	}
}

func TestContinueFirst(t *testing.T) {
	for _, c := range table {
		if c.in == "" {
			continue
		}
		if Upper(c.in) != c.want {
			t.Errorf("bad")
		}
	}
}

func TestReportedContinue(t *testing.T) {
	for i := 0; i < 3; i++ {
		if _, err := Parse("1"); err != nil {
			t.Errorf("%v", err)
			continue
		}
		if !Even(i) {
			t.Errorf("odd")
		}
	}
}

func TestReturnFirst(t *testing.T) {
	if Skip() {
		return
	}
	if !Even(2) {
		t.Error("odd")
	}
}

func TestElse(t *testing.T) {
	if Even(2) {
		t.Log("even")
	} else {
		t.Error("odd")
	}
}

func TestEmptyRange(t *testing.T) {
	for range []int{} {
		if !Even(2) {
			t.Error("odd")
		}
	}
}
"""


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("TestLiteral", r"\tif got := Add\(2, 3\); got != [0-4] \{"),
        ("TestHeldString", r'\twant := "(?P<text>[a-z]{3})"'),
        ("TestComposite", r'\twant := map\[string\]int\{"k": [0-6]\}'),  # the value, never the key
        ("TestHeldButUsed", r"\tif got == want \{"),  # `want` feeds the code: changing it changes the test
        ("TestError", r"\tif err == nil \{"),
        ("TestDeMorgan", r"\tif err == nil && got == Add\(0, 1\) \{"),
        ("TestAnd", r"\tif a, b := Pair\(\); a != 1 \|\| !\(b\+1 > 2\) \{"),
        ("TestTestify", r"\treq.Error\(t, err\)"),
        ("TestTestifyLiteral", r'\treq.Equal\(t, "(?P<text>[a-z]{3})", Name\(\)\)'),
        ("TestSubtests", r"\t\t\tif Upper\(c.in\) == c.want \{"),  # in the subtest, on its own *testing.T
        ("TestReportedContinue", r"\t\tif Even\(i\) \{"),  # a `continue` only after a report: never in a pass
    ],
)
def test_each_form_of_check_gets_its_twin(name: str, expected: str) -> None:
    for lines in twin_lines(FORMS, {name}):
        ((old, new),) = lines
        assert old != new
        match = re.fullmatch(expected, new)
        assert match is not None, (old, new)
        if "text" in match.groupdict():  # "abc" with one of its letters replaced by another small letter
            text = match.group("text")
            assert sum(a != b for a, b in zip(text, "abc", strict=True)) == 1


@pytest.mark.parametrize("name", ["TestContinueFirst", "TestReturnFirst", "TestElse", "TestEmptyRange"])
def test_a_test_whose_check_may_not_run_when_it_passes_gets_no_twin(name: str) -> None:
    """A `continue` or `return` before the check, an `if` with an `else`, a loop that may not run: a twin there could
    pass with the original."""
    assert make_twins("p_test.go", FORMS, {name}) is None


def test_every_twin_of_a_file_is_written_at_once_and_the_rest_of_the_file_is_kept() -> None:
    names = {"TestLiteral", "TestError", "TestTestify", "TestSubtests", "TestContinueFirst"}
    made = make_twins("p_test.go", FORMS, names, random.Random(3))
    assert made is not None
    assert sorted(twin.name for twin in made.twins) == sorted(names - {"TestContinueFirst"})
    assert len(changed_lines(FORMS, made.content.decode())) == 4
    assert Source.read(made.content.decode()) is not None
    # byte for byte, only the changed tokens differ
    matcher = difflib.SequenceMatcher(None, FORMS, made.content.decode(), autojunk=False)
    assert sum(size for *_, size in matcher.get_matching_blocks()) >= len(FORMS) - 8


def test_a_number_changes_towards_zero_and_zero_to_one() -> None:
    text = 'package p\n\nimport "testing"\n\nfunc TestByte(t *testing.T) {\n\tif b := Byte(); b != VALUE {\n'
    for value in ("255", "0", "1", "10"):
        source = text.replace("VALUE", value) + "\t\tt.Fail()\n\t}\n}\n"
        for lines in twin_lines(source, {"TestByte"}):
            ((_, new),) = lines
            changed = int(new.split("!= ")[1].split(" ")[0])
            assert changed != int(value) and (changed <= int(value) or value == "0")
            assert value != "0" or changed == 1
