"""The XML report parsers (GoogleTest, Surefire) give SWE-bench's ids: each report here is a real one, next to
the console log of the same run, which the `swebench` package's own log parser must read into the same ids and
outcomes.

The reports and logs were made with GoogleTest 1.12.1 (g++ 12) and Maven Surefire 3.2.5 (JUnit 5.10.2); trimmed to
keep the file short (timestamps, durations, stack traces and unrelated output removed). Each run had a test that
prints a fake result line, which only the console parser believes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from swe_forge_dagster.execution import reports
from swe_forge_dagster.languages.cpp import pack as cpp
from swe_forge_dagster.languages.java import pack as java
from swe_forge_dagster.languages.node import reports as node_reports
from tests.support.report_checks import _c, _java, swebench, without

GTEST_XML = b"""<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="11" failures="4" disabled="1" errors="0" name="AllTests">
  <testsuite name="ranges_test" tests="5" failures="1" disabled="1" skipped="1" errors="0">
    <testcase name="join_tuple" status="run" result="completed" classname="ranges_test" />
    <testcase name="format_array" status="run" result="completed" classname="ranges_test">
      <failure message="ranges_test.cc:4&#x0A;a &lt;b&gt; &amp; &quot;c&quot; ]]&gt; \
&lt;?xml version=&quot;1.0&quot;?&gt; \xc3\xa9" type=""><![CDATA[ranges_test.cc:4
a <b> & "c" ]]>]]&gt;<![CDATA[ <?xml version="1.0"?> \xc3\xa9]]></failure>
    </testcase>
    <testcase name="skipped_one" status="run" result="skipped" classname="ranges_test">
      <skipped message="ranges_test.cc:5&#x0A;not today"><![CDATA[ranges_test.cc:5
not today]]></skipped>
    </testcase>
    <testcase name="DISABLED_off" status="notrun" result="suppressed" classname="ranges_test" />
    <testcase name="prints_fake" status="run" result="completed" classname="ranges_test" />
  </testsuite>
  <testsuite name="TypedT/1" tests="1" failures="1" disabled="0" skipped="0" errors="0">
    <testcase name="size" type_param="char" status="run" result="completed" classname="TypedT/1">
      <failure message="ranges_test.cc:17" type=""><![CDATA[ranges_test.cc:17]]></failure>
    </testcase>
  </testsuite>
  <testsuite name="Nums/ParamTest" tests="2" failures="1" disabled="0" skipped="0" errors="0">
    <testcase name="even/0" value_param="2" status="run" result="completed" classname="Nums/ParamTest" />
    <testcase name="even/1" value_param="3" status="run" result="completed" classname="Nums/ParamTest">
      <failure message="ranges_test.cc:9" type=""><![CDATA[ranges_test.cc:9]]></failure>
    </testcase>
  </testsuite>
</testsuites>
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="0" disabled="0" errors="0" name="AllTests">
  <testsuite name="std_test" tests="2" failures="0" disabled="0" skipped="0" errors="0">
    <testcase name="path" status="run" result="completed" classname="std_test" />
  </testsuite>
</testsuites>
"""
GTEST_CONSOLE = """\
[ RUN      ] ranges_test.join_tuple
[       OK ] ranges_test.join_tuple (0 ms)
[ RUN      ] ranges_test.format_array
a <b> & "c" ]]> <?xml version="1.0"?> é
[  FAILED  ] ranges_test.format_array (0 ms)
[ RUN      ] ranges_test.skipped_one
[  SKIPPED ] ranges_test.skipped_one (0 ms)
[ DISABLED ] ranges_test.DISABLED_off
[ RUN      ] ranges_test.prints_fake
[       OK ] ranges_test.forged (0 ms)
[       OK ] ranges_test.prints_fake (0 ms)
[ RUN      ] TypedT/1.size
[  FAILED  ] TypedT/1.size, where TypeParam = char (0 ms)
[ RUN      ] Nums/ParamTest.even/0
[       OK ] Nums/ParamTest.even/0 (0 ms)
[ RUN      ] Nums/ParamTest.even/1
[  FAILED  ] Nums/ParamTest.even/1, where GetParam() = 3 (0 ms)
[  FAILED  ] 3 tests, listed below:
[  FAILED  ] ranges_test.format_array
[ RUN      ] std_test.path
[       OK ] std_test.path (0 ms)
"""


def test_gtest_ids_are_swebench_ids_and_the_report_is_not_fooled_by_printed_lines() -> None:
    ours = cpp.parse_gtest_xml(GTEST_XML, ["test/ranges-test.cc"])
    theirs = swebench(_c.parse_log_googletest, GTEST_CONSOLE)
    assert theirs.pop("ranges_test.forged") == "passed"  # printed by ranges_test.prints_fake
    # A failed parameterized test's console line carries ", where GetParam() = 3"; the passing one, the
    # form a task lists, does not.
    assert {re.sub(r", where .*", "", test_id): o for test_id, o in theirs.items()} == without(ours, "skipped")
    assert ours["ranges_test.skipped_one"] == ours["ranges_test.DISABLED_off"] == "skipped"
    assert ours["TypedT/1.size"] == ours["Nums/ParamTest.even/1"] == "failed"
    assert ours["std_test.path"] == "passed"  # from the second, concatenated document


def test_split_xml_documents_splits_after_each_root_not_at_an_xml_declaration_in_cdata() -> None:
    documents = reports.split_xml_documents(GTEST_XML)
    assert len(documents) == 2 and documents[1].startswith(b"<?xml")
    assert [ET.fromstring(d).tag for d in documents] == ["testsuites", "testsuites"]
    assert reports.split_xml_documents(b"<a/>\n<b/>  \n") == [b"<a/>\n", b"<b/>  \n"]
    assert reports.split_xml_documents(b" \n") == [] and cpp.parse_gtest_xml(b"", []) == {}
    with pytest.raises(ValueError, match="root element"):
        java.parse_surefire(b"<html><testcase name='x'/></html>", [])


@pytest.mark.parametrize("cut", [len(GTEST_XML) - 20, len(GTEST_XML) // 2, 60])
def test_a_truncated_xml_report_is_unreadable(cut: int) -> None:
    with pytest.raises(ValueError):
        cpp.parse_gtest_xml(GTEST_XML[:cut], [])


@pytest.mark.parametrize(
    "doctype",
    [
        b'<!DOCTYPE t [<!ENTITY e "passed">]>',
        b'<!DOCTYPE t [<!ENTITY e SYSTEM "http://127.0.0.1:9/x">]>',
        b'<!DOCTYPE t [<!ENTITY e SYSTEM "file:///etc/passwd">]>',
        b'<!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>',
    ],
)
def test_a_doctype_is_refused_so_no_entity_is_expanded_or_fetched(doctype: bytes) -> None:
    report = b'<?xml version="1.0"?>' + doctype + b'<testsuite><testcase classname="c" name="&e;"/></testsuite>'
    for parse in (cpp.parse_gtest_xml, node_reports.parse_mocha_xunit, java.parse_surefire):
        with pytest.raises(ValueError, match="DOCTYPE"):
            parse(report, [])


SUREFIRE_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/'
    'surefire-test-report-3.0.xsd" version="3.0" '
)
SUREFIRE_XML = f"""{SUREFIRE_HEAD}name="com.google.gson.stream.JsonReaderTest" time="0.024" tests="1" errors="0" \
skipped="0" failures="0">
  <properties>
    <property name="java.version" value="17.0.15"/>
  </properties>
  <testcase name="testSkipValue" classname="com.google.gson.stream.JsonReaderTest" time="0.001"/>
</testsuite>
{SUREFIRE_HEAD}name="com.google.gson.stream.JsonWriterTest" time="0.438" tests="6" errors="1" skipped="1" failures="1">
  <properties>
  </properties>
  <testcase name="testParam(int)[1]" classname="com.google.gson.stream.JsonWriterTest" time="0.11"/>
  <testcase name="testNonFiniteDoublesWhenLenient" classname="com.google.gson.stream.JsonWriterTest" time="0.032">
    <failure message="expected: &lt;&lt;&amp;&gt;&quot;é&gt; but was: &lt;x&gt;" \
type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <<&>"é> but was: <x>
	at com.google.gson.stream.JsonWriterTest.testNonFiniteDoublesWhenLenient(JsonWriterTest.java:11)
]]></failure>
  </testcase>
  <testcase name="testIgnored" classname="com.google.gson.stream.JsonWriterTest" time="0.0">
    <skipped message="later"/>
  </testcase>
  <testcase name="testDoubles" classname="com.google.gson.stream.JsonWriterTest" time="0.012">
    <system-out><![CDATA[Tests run: 1, <&> ]]]]><![CDATA[> é
]]></system-out>
  </testcase>
  <testcase name="testThrows" classname="com.google.gson.stream.JsonWriterTest" time="0.021">
    <error message="boom" type="java.lang.IllegalStateException"><![CDATA[java.lang.IllegalStateException: boom
]]></error>
  </testcase>
</testsuite>
""".encode()
MAVEN_EACH = """\
+ mvn -o -B test -Dtest=com.google.gson.stream.JsonWriterTest#testDoubles
Tests run: 1, <&> ]]> é
[INFO] BUILD SUCCESS
+ mvn -o -B test -Dtest=com.google.gson.stream.JsonWriterTest#testNonFiniteDoublesWhenLenient
[INFO] BUILD FAILURE
+ mvn -o -B test -Dtest=com.google.gson.stream.JsonReaderTest#testSkipValue
[INFO] BUILD SUCCESS
"""


def test_surefire_ids_are_class_hash_method_as_maven_runs_them_one_by_one() -> None:
    ours = java.parse_surefire(SUREFIRE_XML, ["src/test/java/com/google/gson/stream/JsonWriterTest.java"])
    theirs = swebench(_java.parse_log_maven, MAVEN_EACH)
    assert theirs == {test_id: ours[test_id] for test_id in theirs}
    writer = "com.google.gson.stream.JsonWriterTest#"
    assert ours[writer + "testThrows"] == "error" and ours[writer + "testIgnored"] == "skipped"
    assert ours[writer + "testParam(int)[1]"] == "passed"


def test_surefire_gradle_and_junit4_styles_are_the_other_java_parsers_ids() -> None:
    gradle = java.parse_surefire(SUREFIRE_XML, [], style="gradle")
    log = "".join(f"{test_id} {o.upper()}\n" for test_id, o in gradle.items() if o in ("passed", "failed"))
    assert swebench(_java.parse_log_gradle_custom, log) == without(without(gradle, "skipped"), "error")
    assert "com.google.gson.stream.JsonReaderTest > testSkipValue" in gradle
    junit4 = java.parse_surefire(SUREFIRE_XML, [], style="junit4")
    assert swebench(
        _java.parse_log_ant, "    [junit] [PASS] testSkipValue(com.google.gson.stream.JsonReaderTest)\n"
    ) == {test_id: o for test_id, o in junit4.items() if test_id.startswith("testSkipValue(")}


def test_surefire_flaky_reruns_and_duplicates_keep_the_worst_outcome() -> None:
    report = b"""<testsuite name="C"><testcase name="m" classname="p.C"><flakyFailure message="x"/></testcase>
<testcase name="n" classname="p.C"/><testcase name="n" classname="p.C"><failure/></testcase>
<testcase name="k" classname="p.C"/></testsuite>"""
    assert java.parse_surefire(report, []) == {"p.C#m": "failed", "p.C#n": "failed", "p.C#k": "passed"}
