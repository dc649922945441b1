"""The Java pack: Maven (and Gradle, recognised but not built) projects, tested with Surefire, on OpenJDK + Maven.

Maven compiles the tests and resolves its plugins once, online (a Maven build is only tried when
Maven Central answers), then runs offline; Gradle is not supported (its wrapper downloads itself).
The version wanted is pom.xml's Java release. Ids: `pkg.Class#method`, as `java.py:27`
`parse_log_maven` takes them from `-Dtest=` and the Multilingual rows of google/gson list
`com.google.gson.stream.JsonWriterTest#testDoubles`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Literal

from swe_forge_dagster.execution.junit import Outcome, worst
from swe_forge_dagster.execution.recipe import RETOUCH, EnvRecipe
from swe_forge_dagster.execution.reports import record, xml_outcome, xml_testcases
from swe_forge_dagster.execution.runners import Runner, command_word
from swe_forge_dagster.execution.toolchains import registry_reachable, version_numbers
from swe_forge_dagster.languages.pack import AgentHints, Files, LanguagePack, RunnerHints
from swe_forge_dagster.settings import get_settings

MAVEN = (
    "find . -type d -path '*/target/surefire-reports' -prune -exec rm -rf {{}} +; "
    "mvn -o -q test -DfailIfNoTests=false -Dsurefire.failIfNoSpecifiedTests=false -Dtest={tests}; "
    "find . -path '*/target/surefire-reports/TEST-*.xml' -exec cat {{}} + > {report}"
)
"""Every module's Surefire reports (a multi-module build writes one folder per module), concatenated."""
_SURE_FLAKY: dict[str, Outcome] = {"flakyFailure": "failed", "flakyError": "error"}


def parse_surefire(
    report: bytes, files: Iterable[str] = (), *, style: Literal["maven", "gradle", "junit4"] = "maven"
) -> dict[str, Outcome]:
    """Maven Surefire / Gradle JUnit XML (`TEST-*.xml`, one document per test class, concatenated).

    `style` picks the id form, as SWE-bench Multilingual's Java repositories differ: "maven"
    `pkg.Class#method` (default: `parse_log_maven` takes the id from `-Dtest=`, and gson's and druid's
    rows list `Class#method`; javaparser's list bare class names, which the method ids do not give),
    "gradle" `pkg.Class > method` (`parse_log_gradle_custom`, rxjava, lucene) and "junit4"
    `method(pkg.Class)` (`parse_log_ant`, lombok). `<failure>` is failed, `<error>` error, `<skipped>`
    skipped; surefire's rerun records `flakyFailure`/`flakyError` count as failures, since a test that
    only passed on a retry is not a pass (validation finds flakiness by running the suite again).
    """
    results: dict[str, Outcome] = {}
    for case in xml_testcases(report):
        classname, name = case.get("classname", ""), case.get("name", "")
        if not classname:
            test_id = name
        elif style == "gradle":
            test_id = f"{classname} > {name}"
        elif style == "junit4":
            test_id = f"{name}({classname})"
        else:
            test_id = f"{classname}#{name}"
        outcome = xml_outcome(case)
        for child in case:
            if (flaky := _SURE_FLAKY.get(child.tag)) is not None:
                outcome = worst(outcome, flaky)
        record(results, test_id, outcome)
    return results


def _java_classes(files: Sequence[str]) -> list[str]:
    """Surefire's `-Dtest=` takes class names, comma-separated."""
    return [",".join(dict.fromkeys(PurePosixPath(f).stem for f in files))] if files else []


def _own_ids(outcomes: Mapping[str, Outcome], files: Mapping[str, str]) -> dict[str, Outcome]:
    """Surefire ids start with the class, named after its file."""
    classes = {PurePosixPath(path).stem for path in files}
    return {test_id: o for test_id, o in outcomes.items() if test_id.split("#")[0].rsplit(".", 1)[-1] in classes}


MAVEN_RUNNER = Runner(
    name="maven",
    parse=parse_surefire,
    language="java",
    template=MAVEN,
    report_kind="Surefire XML",
    single_template="mvn -o -q test -Dtest={id}",
    detect=command_word("mvn") + "|surefire-reports",
    suffixes=(".java",),
    targets=_java_classes,
    own_ids=_own_ids,
)


def declared_version(files: Files) -> tuple[int, ...] | None:
    java_release = r"<(?:maven\.compiler\.(?:release|source)|java\.version)>(?:1\.)?(\d+)<"
    match = re.search(java_release, files.get("pom.xml", ""))
    return version_numbers(match.group(1)) if match else None


def dependency_problem(files: Files, tree: set[str]) -> str | None:
    maven = get_settings().maven_url
    if not registry_reachable(maven):
        build = "Gradle" if any(name.startswith("build.gradle") for name in files) else "Maven"
        return f"a {build} build needs Maven Central ({maven}), unreachable from the sandbox"
    return None


def java_recipes(files: Files, tree: set[str], image: str) -> tuple[list[EnvRecipe], str | None]:
    if "pom.xml" not in files:
        return [], "a Gradle build (its wrapper and plugins are downloaded at build time)"
    # online: a Maven build is only tried when Maven Central answers (`dependency_problem`); `test` with
    # -DskipTests also resolves Surefire, which the offline test runs need
    return [EnvRecipe((f"mvn -q -B test -DskipTests && {RETOUCH}",), MAVEN, image)], None


PACK = LanguagePack(
    name="java",
    manifests=("pom.xml", "build.gradle", "build.gradle.kts"),
    extensions=(".java", ".kt"),
    runners=(MAVEN_RUNNER,),
    hints=AgentHints(
        title="Java",
        image="a JDK and Maven, git",
        install="Maven only (a Gradle build cannot be set up here). Resolve and compile while you have network "
        "(`mvn -q -DskipTests test-compile`); the tests run offline with `mvn -o`.",
        runners={
            "maven": RunnerHints(
                targets="the test classes, comma-separated",
                naming="src/test/java/<package path>/<Name>Test.java (JUnit, as the project's other tests)",
                example="src/test/java/org/example/ExampleTest.java",
                id_form="package.Class#method",
            )
        },
    ),
    images={"swe-forge-java:bookworm": "17", "swe-forge-java:trixie": "21"},
    test_code=lambda path: "/src/test/" in f"/{path}",  # Maven's test source root
    test_file_patterns=(r".*(Tests?|IT|Spec)\.(java|kt)", r"(^|/)src/(test|androidTest|integrationTest)/"),
    dependency_files=("pom.xml", "build.gradle"),
    dependencies_fixed=True,
    declared_version=declared_version,
    dependency_problem=dependency_problem,
    recipes=java_recipes,
    seed_languages=("java",),
    seed_major_only=True,
    debian_packages="default-jdk-headless maven gradle",
    compiled=True,
)
