"""The stream and JSON report parsers (go test -json, mocha, jest, vitest, libtest) give SWE-bench's ids: each
report here is a real one, next to the console log of the same run, which the `swebench` package's own log parser
must read into the same ids and outcomes.

Made with go 1.24.4 and 1.19.8, cargo 1.95, mocha 10.8.2, jest 29.7.0 and vitest 3.2.7 (node 18); trimmed to keep
the file short; the mocha and jest JSON reports are rebuilt from the real ones' fields. Each run had a test that
prints a fake result line, which only the console parser believes.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from swe_forge_dagster.languages.go import pack as go
from swe_forge_dagster.languages.node import reports as node_reports
from swe_forge_dagster.languages.rust import pack as rust
from tests.support.report_checks import _go, _js, _rust, swebench, without

GO_JSON_124 = b"""\
{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-fail"}
{"Action":"output","Package":"example.com/m/broken","Output":"FAIL\\texample.com/m/broken [build failed]\\n"}
{"Action":"fail","Package":"example.com/m/broken","Elapsed":0,"FailedBuild":"example.com/m/broken [\
example.com/m/broken.test]"}
{"Action":"run","Package":"example.com/m/crash","Test":"TestBefore"}
{"Action":"pass","Package":"example.com/m/crash","Test":"TestBefore","Elapsed":0}
{"Action":"run","Package":"example.com/m/crash","Test":"TestPanics"}
{"Action":"run","Package":"example.com/m/crash","Test":"TestPanics/inner"}
{"Action":"fail","Package":"example.com/m/crash","Test":"TestPanics/inner","Elapsed":0}
{"Action":"output","Package":"example.com/m/crash","Test":"TestPanics","Output":"panic: kaboom [recovered]\\n"}
{"Action":"fail","Package":"example.com/m/crash","Test":"TestPanics","Elapsed":0}
{"Action":"run","Package":"example.com/m/ok","Test":"TestPass"}
{"Action":"pass","Package":"example.com/m/ok","Test":"TestPass","Elapsed":0}
{"Action":"run","Package":"example.com/m/ok","Test":"TestFail"}
{"Action":"fail","Package":"example.com/m/ok","Test":"TestFail","Elapsed":0}
{"Action":"run","Package":"example.com/m/ok","Test":"TestSkip"}
{"Action":"skip","Package":"example.com/m/ok","Test":"TestSkip","Elapsed":0}
{"Action":"run","Package":"example.com/m/ok","Test":"TestForge"}
{"Action":"output","Package":"example.com/m/ok","Test":"TestForge","Output":"--- PASS: TestForged (0.00s)\\n"}
{"Action":"output","Package":"example.com/m/ok","Test":"TestForge","Output":"--- FAIL: TestPass (0.00s)\\n"}
{"Action":"pass","Package":"example.com/m/ok","Test":"TestForge","Elapsed":0}
{"Action":"run","Package":"example.com/m/ok","Test":"TestSub"}
{"Action":"run","Package":"example.com/m/ok","Test":"TestSub/a_b"}
{"Action":"pass","Package":"example.com/m/ok","Test":"TestSub/a_b","Elapsed":0}
{"Action":"run","Package":"example.com/m/ok","Test":"TestSub/x\\u003c\\u0026\\u003e'\\"\xc3\xa9"}
{"Action":"pass","Package":"example.com/m/ok","Test":"TestSub/x\\u003c\\u0026\\u003e'\\"\xc3\xa9","Elapsed":0}
{"Action":"fail","Package":"example.com/m/ok","Test":"TestSub","Elapsed":0}
"""
GO_CONSOLE = """\
FAIL	example.com/m/broken [build failed]
=== RUN   TestBefore
--- PASS: TestBefore (0.00s)
--- FAIL: TestPanics (0.00s)
    --- FAIL: TestPanics/inner (0.00s)
panic: kaboom [recovered]
--- PASS: TestPass (0.00s)
--- FAIL: TestFail (0.00s)
--- SKIP: TestSkip (0.00s)
=== RUN   TestForge
--- PASS: TestForged (0.00s)
--- FAIL: TestPass (0.00s)
--- PASS: TestForge (0.00s)
--- FAIL: TestSub (0.00s)
    --- PASS: TestSub/a_b (0.00s)
    --- PASS: TestSub/x<&>'"é (0.00s)
"""


def test_go_ids_are_swebench_ids_and_go_1_20_framing_defeats_printed_results() -> None:
    ours = go.parse_go_test_json(GO_JSON_124, ["ok/ok_test.go"])
    theirs = swebench(_go.parse_log_gotest, GO_CONSOLE)
    assert theirs.pop("TestForged") == "passed" and theirs["TestPass"] == "failed"  # both printed by TestForge
    theirs["TestPass"] = "passed"
    assert ours == theirs
    assert ours["TestSub/x<&>'\"é"] == "passed" and "TestNeverBuilt" not in ours


def test_go_1_19_stream_believes_a_printed_result_line() -> None:
    """Go 1.19's test2json parses the binary's plain text: what TestForge printed became events."""
    go_119 = b"""\
FAIL	example.com/m/broken [build failed]
{"Action":"run","Package":"example.com/m/ok","Test":"TestPass"}
{"Action":"pass","Package":"example.com/m/ok","Test":"TestPass","Elapsed":0}
{"Action":"run","Package":"example.com/m/ok","Test":"TestForge"}
{"Action":"output","Package":"example.com/m/ok","Test":"TestForged","Output":"--- PASS: TestForged (0.00s)\\n"}
{"Action":"pass","Package":"example.com/m/ok","Test":"TestForged","Elapsed":0}
{"Action":"output","Package":"example.com/m/ok","Test":"TestPass","Output":"--- FAIL: TestPass (0.00s)\\n"}
{"Action":"fail","Package":"example.com/m/ok","Test":"TestPass","Elapsed":0}
{"Action":"pass","Package":"example.com/m/ok","Test":"TestForge","Elapsed":0}
"""
    assert go.parse_go_test_json(go_119, []) == {
        "TestPass": "failed",
        "TestForged": "passed",
        "TestForge": "passed",
    }


def test_a_go_test_that_started_but_never_finished_failed() -> None:
    stream = b"""\
{"Action":"run","Package":"p","Test":"TestHangs"}
{"Action":"output","Package":"p","Test":"TestHangs","Output":"panic: test timed out after 1s\\n"}
not json at all {
{"Action":"fail","Package":"p","Elapsed":1.0}
{"Action":"run","Package":"q","Test":"TestHangs"}
{"Action":"pass","Package":"q","Test":"TestHangs","Elapsed":0}
"""
    assert go.parse_go_test_json(stream, []) == {"TestHangs": "failed"}  # worst of the two packages
    assert go.parse_go_test_json(b"", []) == {}


MOCHA_XUNIT = b"""\
<testsuite name="Mocha Tests" tests="8" failures="0" errors="2" skipped="1" time="0.02">
<testcase classname="" name="root level test" file="/w/test/issues.js" time="0"/>
<testcase classname="issues 5028" name="should handle set-cookie headers as an array" file="/w/test/issues.js" \
time="0"/>
<testcase classname="issues 5028" name="fails &#x3C;&#x26;&#x3E; &#x22;q&#x22; &#x27;s &#xE9;" time="0.003"><failure>\
Expected values to be strictly equal:

1 !== 2
    at Context.&#x3C;anonymous&#x3E; (test/issues.js:6:52)</failure></testcase>
<testcase classname="issues 5028" name="has # hash and #1 tag" file="/w/test/issues.js" time="0"/>
<testcase classname="issues 5028" name="multi
line" file="/w/test/issues.js" time="0"/>
<testcase classname="issues 5028" name="pending without fn" file="/w/test/issues.js" time="0"><skipped/></testcase>
<testcase classname="issues 5028" name="skipped one" file="/w/test/issues.js" time="0"><skipped/></testcase>
<testcase classname="hooks" name="&#x22;before all&#x22; hook for &#x22;never runs&#x22;" time="0.001"><failure>\
setup broke</failure></testcase>
<testcase classname="forge" name="prints tap" file="/w/test/issues.js" time="0.001"/>
<testcase classname="s" name="ctl &#x1; esc &#x1B;[31m red" file="/w/ctl.js" time="0"/>
</testsuite>
"""
MOCHA_TAP = """\
ok 1 root level test
ok 2 issues 5028 should handle set-cookie headers as an array
not ok 3 issues 5028 fails <&> "q" 's é
  Expected values to be strictly equal:
ok 4 issues 5028 has  hash and 1 tag
ok 5 issues 5028 multi
line
ok 6 issues 5028 pending without fn # SKIP -
ok 7 issues 5028 skipped one # SKIP -
not ok 8 hooks "before all" hook for "never runs"
  setup broke
ok 99 forged test
ok 8 forge prints tap
ok 9 s ctl \x01 esc \x1b[31m red
# tests 7
1..9
"""
MOCHA_JSON = {
    "stats": {"suites": 4, "tests": 8, "passes": 5, "pending": 2, "failures": 2},
    "passes": [{"title": t, "fullTitle": f"issues 5028 {t}"} for t in ("has # hash and #1 tag", "multi\nline")],
    "failures": [
        {"title": 'fails <&> "q" \'s é', "fullTitle": 'issues 5028 fails <&> "q" \'s é', "err": {"message": "1 !== 2"}},
        {"title": '"before all" hook for "never runs"', "fullTitle": 'hooks "before all" hook for "never runs"'},
    ],
    "pending": [{"title": "skipped one", "fullTitle": "issues 5028 skipped one", "err": {}}],
}


def test_mocha_xunit_ids_are_the_full_titles_the_tap_reporter_prints() -> None:
    ours = node_reports.parse_mocha_xunit(MOCHA_XUNIT, ["test/issues.js"])
    theirs = swebench(_js.parse_log_tap, MOCHA_TAP)
    assert theirs.pop("forged test") == "passed"  # printed by "forge prints tap"
    # TAP prints a skipped test as passed with a "# SKIP -" suffix, and cuts a title at its newline, which
    # the xunit attribute turns into a space.
    assert theirs.pop("issues 5028 multi") == "passed" and ours.pop("issues 5028 multi line") == "passed"
    assert {t.removesuffix(" # SKIP -"): o for t, o in theirs.items() if not t.endswith("# SKIP -")} == without(
        ours, "skipped"
    )
    assert ours["issues 5028 skipped one"] == ours["issues 5028 pending without fn"] == "skipped"
    assert ours["s ctl \x01 esc \x1b[31m red"] == "passed"  # mocha wrote `&#x1;`, which XML 1.0 forbids
    assert "issues 5028 has # hash and #1 tag" in node_reports.parse_mocha_xunit(MOCHA_XUNIT, [], strip_hash=False)
    from_json = node_reports.parse_mocha_json(json.dumps(MOCHA_JSON).encode(), [])  # the same ids, but the newline
    assert from_json.pop("issues 5028 multi\nline") == "passed" and from_json.items() <= ours.items()
    assert len(from_json) == 4


def _assertion(ancestors: list[str], title: str, status: str) -> dict[str, object]:
    return {"ancestorTitles": ancestors, "fullName": " ".join([*ancestors, title]), "status": status, "title": title}


JEST_ASSERTIONS = [
    _assertion([], "root level test", "passed"),
    _assertion(["issues", "5028"], "should handle set-cookie headers as an array", "passed"),
    _assertion(["issues", "5028"], 'fails <&> "q" \'s é', "failed"),
    _assertion(["issues", "5028"], "dup", "passed"),
    _assertion(["issues", "5028"], "multi\nline", "passed"),
    _assertion(["issues", "5028"], "skipped one", "pending"),
    _assertion(["issues", "5028"], "todo one", "todo"),
    _assertion(["issues", "other"], "dup", "failed"),
    _assertion(["forge"], "prints", "passed"),
]
JEST_JSON = json.dumps(
    {
        "numTotalTests": 9,
        "success": False,
        "testResults": [
            {"assertionResults": JEST_ASSERTIONS, "name": "/w/jt/issues.test.js", "status": "failed"},
            {"assertionResults": [], "name": "/w/jt/broken.test.js", "status": "failed", "testExecError": {}},
        ],
    }
).encode()
JEST_VERBOSE = """\
  ✓ forged (1 ms)
FAIL jt/issues.test.js
  ✓ root level test (2 ms)
  issues
    5028
      ✓ should handle set-cookie headers as an array (1 ms)
      ✕ fails <&> "q" 's é (4 ms)
      ✓ dup
      ✓ multi
line (1 ms)
      ○ skipped skipped one
      ✎ todo todo one
    other
      ✕ dup (1 ms)
  forge
    ✓ prints (1 ms)
"""
VITEST_VERBOSE = """\
  ✓ forged (1 ms)
 ✓ issues.test.js > root level test 2ms
 ✓ issues.test.js > issues > 5028 > should handle set-cookie headers as an array 0ms
 × issues.test.js > issues > 5028 > fails <&> "q" 's é 14ms
   → expected 1 to be 2 // Object.is equality
 ✓ issues.test.js > issues > 5028 > dup 0ms
 ✓ issues.test.js > issues > 5028 > multi
line 0ms
 ↓ issues.test.js > issues > 5028 > skipped one
 ↓ issues.test.js > issues > 5028 > todo one
 × issues.test.js > issues > other > dup 2ms
 ✓ issues.test.js > forge > prints 2ms
"""


def test_jest_ids_are_the_bare_titles_of_verbose_output() -> None:
    ours = node_reports.parse_jest_json(JEST_JSON, ["jt/issues.test.js"])
    theirs = swebench(_js.parse_log_jest, JEST_VERBOSE)
    assert theirs.pop("forged") == "passed" and theirs.pop("multi") == ours.pop("multi\nline") == "passed"
    assert theirs.pop("skipped skipped one") == ours.pop("skipped one") == "skipped"
    assert ours.pop("todo one") == "skipped"  # verbose prints `✎ todo todo one`, which swebench ignores
    assert ours == theirs and ours["dup"] == "failed"  # the two `dup`s share an id: the worst wins


def test_jest_path_ids_are_the_jq_transform_form() -> None:
    ours = node_reports.parse_jest_json(JEST_JSON, [], titles="path")
    # swebench's JEST_JSON_JQ_TRANSFORM: "[" + (.status | ascii_upcase) + "] " + ancestors joined " > " + title
    log = "".join(
        f"[{a['status'].upper()}] {' > '.join([*a['ancestorTitles'], a['title']])}\n" for a in JEST_ASSERTIONS
    )
    theirs = swebench(_js.parse_log_jest_json, log)
    assert theirs.pop("issues > 5028 > multi") == ours.pop("issues > 5028 > multi\nline") == "passed"
    assert theirs == without(ours, "skipped")
    assert ours["issues > other > dup"] == "failed" and ours["issues > 5028 > dup"] == "passed"


def test_vitest_ids_are_file_and_title_path_of_verbose_output() -> None:
    report = JEST_JSON.replace(b"/w/jt/", b"/w/vt/").replace(b'"pending"', b'"skipped"')
    ours = node_reports.parse_vitest_json(report, ["./issues.test.js", "other.test.js"])
    theirs = swebench(_js.parse_log_vitest, VITEST_VERBOSE)
    assert theirs.pop("forged (1 ms)") == "passed"
    multi = "issues.test.js > issues > 5028 > multi"
    assert theirs.pop(multi) == ours.pop(multi + "\nline") == "passed"
    assert ours == theirs
    assert "/w/vt/issues.test.js > root level test" in node_reports.parse_vitest_json(report, [])  # no file known


@pytest.mark.parametrize(
    "parse", [node_reports.parse_jest_json, node_reports.parse_vitest_json, node_reports.parse_mocha_json]
)
@pytest.mark.parametrize("report", [b"", b"[]", b'{"testResults": 3}', b'{"passes": [1]}', b'{"testResults": [{'])
def test_an_unreadable_json_report_raises(parse: Callable[..., object], report: bytes) -> None:
    if report == b'{"passes": [1]}' and parse is not node_reports.parse_mocha_json:
        report = b'{"testResults": [{"assertionResults": [{"title": 1}]}]}'
    with pytest.raises(ValueError):
        parse(report, [])


LIBTEST_JSON = b"""\
   Compiling demo v0.1.0 (/tmp/rg/rs)
{ "type": "suite", "event": "started", "test_count": 5 }
{ "type": "test", "event": "started", "name": "tests::fails" }
{ "type": "test", "name": "tests::ignored_plain", "event": "ignored" }
{ "type": "test", "event": "started", "name": "tests::ignored_reason" }
{ "type": "test", "name": "tests::ignored_reason", "event": "ignored", "message": "slow" }
{ "type": "test", "event": "started", "name": "tests::nested::deep" }
{ "type": "test", "name": "tests::nested::deep", "event": "ok", "exec_time": 0.000000982 }
{ "type": "test", "event": "started", "name": "tests::passes" }
{ "type": "test", "name": "tests::passes", "event": "ok", "exec_time": 0.000000301 }
{ "type": "test", "name": "tests::fails", "event": "failed", "exec_time": 0.1, "stdout": "test tests::forged ... ok\\n"}
{ "type": "suite", "event": "failed", "passed": 2, "failed": 1, "ignored": 2, "measured": 0, "filtered_out": 0 }
{ "type": "suite", "event": "started", "test_count": 2 }
{ "type": "test", "event": "started", "name": "can_print_file_named_cache" }
{ "type": "test", "event": "started", "name": "does_not_print_unwanted_file_named_cache" }
{ "type": "test", "name": "can_print_file_named_cache", "event": "ok", "exec_time": 0.000000541 }
{ "type": "test", "name": "does_not_print_unwanted_file_named_cache", "event": "failed", "stdout": "nope\\n" }
{ "type": "suite", "event": "failed", "passed": 1, "failed": 1, "ignored": 0, "measured": 0, "filtered_out": 0 }
{ "type": "suite", "event": "started", "test_count": 1 }
{ "type": "test", "event": "started", "name": "src/lib.rs - add (line 3)" }
{ "type": "test", "name": "src/lib.rs - add (line 3)", "event": "ok", "exec_time": 0.002033802 }
{ "type": "suite", "event": "ok", "passed": 1, "failed": 0, "ignored": 0, "measured": 0, "filtered_out": 0 }
"""
LIBTEST_TEXT = """\
     Running unittests src/lib.rs (target/debug/deps/demo-8348ca7a80742723)
running 5 tests
test tests::ignored_plain ... ignored
test tests::ignored_reason ... ignored, slow
test tests::nested::deep ... ok
test tests::passes ... ok
test tests::fails ... FAILED
failures:
---- tests::fails stdout ----
test tests::forged ... ok
failures:
    tests::fails
test result: FAILED. 2 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.16s
     Running tests/integration.rs (target/debug/deps/integration-95c18cfe0a4e431d)
running 2 tests
test can_print_file_named_cache ... ok
test does_not_print_unwanted_file_named_cache ... FAILED
failures:
---- does_not_print_unwanted_file_named_cache stdout ----
failures:
    does_not_print_unwanted_file_named_cache
test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.17s
   Doc-tests demo
running 1 test
test src/lib.rs - add (line 3) ... ok
test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
"""


def test_libtest_json_and_text_give_the_ids_of_parse_log_cargo() -> None:
    ours = rust.parse_libtest(LIBTEST_JSON, ["src/lib.rs", "tests/integration.rs"])
    assert rust.parse_libtest(LIBTEST_TEXT.encode(), []) == ours
    theirs = swebench(_rust.parse_log_cargo, LIBTEST_TEXT)
    assert theirs.pop("tests::forged") == "passed"  # a failed test's captured output, in its failures section
    assert ours.pop("src/lib.rs - add (line 3)") == "passed"  # swebench's `\S+` skips doctests
    assert theirs == without(ours, "skipped")
    assert ours["tests::ignored_reason"] == "skipped"


def test_libtest_json_ignores_text_lines_and_fails_tests_of_an_aborted_binary() -> None:
    report = b"""\
{ "type": "suite", "event": "started", "test_count": 2 }
{ "type": "test", "event": "started", "name": "a::ok" }
{ "type": "test", "event": "started", "name": "a::aborts" }
{ "type": "test", "name": "a::ok", "event": "ok" }
test a::printed ... ok
{ "type": "suite", "event": "started", "test_count": 1 }
{ "type": "test", "event": "started", "name": "b::ok" }
{ "type": "test", "name": "b::ok", "event": "ok" }
"""
    assert rust.parse_libtest(report, []) == {"a::ok": "passed", "a::aborts": "failed", "b::ok": "passed"}
    assert rust.parse_libtest(b"error[E0425]: cannot find value `x`\n", []) == {}
