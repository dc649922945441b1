"""The Rust pack: Cargo.toml crates, tested with `cargo test` (libtest JSON), on Debian's rustc + cargo images.

Recipes build the tests offline (`cargo build --tests`): a crate with crates.io dependencies needs
crates.io, probed once per process, unless it vendors them. The version wanted is rust-toolchain's
channel or Cargo's `rust-version`. Ids: the libtest name `tests::x`, as `rust.py:16`
`parse_log_cargo` reads `test tests::x ... ok`. `.cargo/` is protected: its config can wrap the
test binary. Its canaries' twins run apart, in place of their originals (`languages.rust.canaries`).
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.recipe import RETOUCH, EnvRecipe
from swe_forge_dagster.execution.reports import json_line, record
from swe_forge_dagster.execution.runners import Runner, command_word
from swe_forge_dagster.execution.toolchains import registry_reachable, version_numbers
from swe_forge_dagster.languages.pack import AgentHints, ConfigProbe, Files, LanguagePack, RunnerHints
from swe_forge_dagster.languages.rust import config as cargo_config
from swe_forge_dagster.languages.rust.canaries import plant_cargo
from swe_forge_dagster.settings import get_settings

CARGO = "RUSTC_BOOTSTRAP=1 cargo test --offline {tests} -- -Z unstable-options --format json > {report}"


_LIBTEST_LINE = re.compile(r"test (?P<name>.+?) \.\.\. (?P<result>ok|FAILED|ignored)(?:, .*| <[\d.]+s>)?")
_LIBTEST_EVENTS: dict[str, Outcome] = {"ok": "passed", "failed": "failed", "ignored": "skipped"}


def parse_libtest(report: bytes, files: Iterable[str] = ()) -> dict[str, Outcome]:
    """cargo test's results: libtest's JSON events, or else its text lines; the id is the test's name.

    The runner uses JSON (`RUSTC_BOOTSTRAP=1 cargo test -- -Z unstable-options --format json >
    FILE`): `{"type":"test","event":"ok|failed|ignored","name":"tests::x"}`; a test `started` without
    a result was running when its binary aborted, and is failed. When the report holds any libtest JSON
    event (suite or test), text lines are ignored: they can only come from a test's output.

    The text form (stable `cargo test 2>&1 > FILE`): `test tests::x ... ok|FAILED|ignored[, reason]`,
    as `parse_log_cargo` reads it, accepted only between `running N tests` and that binary's
    `failures:`/`test result:` line, so a failed test's captured output (printed in the failures
    section) cannot add results. Doctests (`src/lib.rs - f (line 3)`) are kept, though SWE-bench's
    `\\S+` never matches them.

    Both are console output: libtest captures only `print!`-family output, so a test that writes to
    the process's stdout directly (`std::io::stdout().write_all`, a child process, fd 1)
    can print fake result lines or JSON events. In JSON mode each binary's summary must count its test events
    (`_check_summary`): a forged event, or one swallowed by an unterminated line, makes the report unreadable. What
    stays possible (a forged pass with a forged summary) the canaries catch (`languages.rust.canaries`).
    """
    events: dict[str, Outcome] = {}
    started: set[str] = set()  # of the current test binary: a binary's suite starts with "suite" "started"
    counted: Counter[str] = Counter()  # the current binary's test results, to check against its summary
    text: dict[str, Outcome] = {}
    json_mode = in_run = False
    for raw in report.splitlines():
        event = json_line(raw)
        if event is not None and event.get("type") in ("suite", "test"):
            json_mode = True
            name, kind = event.get("name"), event.get("event")
            if event["type"] == "suite" and kind == "started":
                _flush_unfinished(events, started)
                counted.clear()
            elif event["type"] == "suite" and kind in ("ok", "failed"):
                _check_summary(event, counted)
            elif event["type"] == "test" and isinstance(name, str):
                if kind == "started":
                    started.add(name)
                elif (outcome := _LIBTEST_EVENTS.get(str(kind))) is not None:
                    started.discard(name)
                    counted[outcome] += 1
                    record(events, name, outcome)
            continue
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if re.fullmatch(r"running \d+ tests?", line):
            in_run = True
        elif line == "failures:" or line.startswith("test result: "):
            in_run = False
        elif in_run and (match := _LIBTEST_LINE.fullmatch(line)):
            record(text, match["name"], _LIBTEST_EVENTS[match["result"].lower()])
    _flush_unfinished(events, started)
    return events if json_mode else text


def _check_summary(event: dict, counted: Counter[str]) -> None:
    """A binary's summary (`{"type":"suite","event":"ok|failed","passed":N,"failed":M,"ignored":K}`) must count the
    test events printed before it. ValueError (the report is unreadable) when it does not: a line printed to the same
    stream by the code under test (a forged `ok`, or an unterminated prefix that swallows libtest's next event)
    changes the events, not the summary libtest counted itself."""
    wanted = {"passed": "passed", "failed": "failed", "ignored": "skipped"}
    for key, outcome in wanted.items():
        if isinstance(event.get(key), int) and event[key] != counted[outcome]:
            raise ValueError(
                f"libtest's summary counts {event[key]} {key} tests but its events {counted[outcome]}: the stream "
                "was written to by the code under test"
            )


def _flush_unfinished(events: dict[str, Outcome], started: set[str]) -> None:
    """Tests a binary started but never finished: it aborted (or hung and was killed) while they ran."""
    for name in started:
        record(events, name, "failed")
    started.clear()


def _cargo_targets(files: Sequence[str]) -> list[str]:
    """Integration tests (`tests/x.rs`) are `--test x`; a test in `src/` is in the library's own tests."""
    targets: list[str] = []
    for f in files:
        path = PurePosixPath(f)
        if path.parent.name == "tests" and path.suffix == ".rs":
            targets += ["--test", path.stem]
        elif "--lib" not in targets:
            targets.append("--lib")
    return targets


CARGO_RUNNER = Runner(
    name="cargo",
    parse=parse_libtest,
    language="rust",
    template=CARGO,
    report_kind="libtest JSON",
    single_template="cargo test --offline {tests} -- --exact {id}",
    detect=command_word("cargo test"),
    suffixes=(".rs",),
    targets=_cargo_targets,
    plant=plant_cargo,
    twins_apart=True,
)


def crates_io_dependencies(cargo_toml: str) -> list[tuple[str, str]]:
    """(kind, crate) of every dependency that comes from a registry (no `path`, no `git`), in table order."""
    try:
        manifest = tomllib.loads(cargo_toml)
    except tomllib.TOMLDecodeError:
        return []
    tables = [(kind, manifest.get(key) or {}) for key, kind in _CARGO_TABLES]
    for target in (manifest.get("target") or {}).values():
        tables += [(kind, target.get(key) or {}) for key, kind in _CARGO_TABLES]
    return [
        (f"optional {kind}" if isinstance(spec, dict) and spec.get("optional") else kind, name)
        for kind, table in tables
        for name, spec in table.items()
        if not (isinstance(spec, dict) and ("path" in spec or "git" in spec))
    ]


_CARGO_TABLES = (
    ("dependencies", "dependency"),
    ("dev-dependencies", "dev-dependency"),
    ("build-dependencies", "build-dependency"),
)


def declared_version(files: Files) -> tuple[int, ...] | None:
    toolchain_file = files.get("rust-toolchain.toml", files.get("rust-toolchain", ""))
    declared = re.search(r"^\s*(?:channel\s*=\s*\"?)?(\d+\.\d+)", toolchain_file, re.MULTILINE) or re.search(
        r"^rust-version\s*=\s*\"(\d+\.\d+)", files.get("Cargo.toml", ""), re.MULTILINE
    )
    return version_numbers(declared.group(1)) if declared else None


def dependency_problem(files: Files, tree: set[str]) -> str | None:
    crates = get_settings().crates_url
    needed = crates_io_dependencies(files.get("Cargo.toml", ""))
    vendored = "[source.vendored-sources]" in files.get(".cargo/config.toml", files.get(".cargo/config", ""))
    if needed and not vendored and not registry_reachable(crates):
        named = ", ".join(f"{kind} {name}" for kind, name in needed[:6]) + (", …" if len(needed) > 6 else "")
        verb = "needs" if len(needed) == 1 else "need"  # cargo resolves optional and dev ones too
        return f"{named} {verb} crates.io ({crates}), unreachable from the sandbox"
    return None


def rust_recipes(files: Files, tree: set[str], image: str) -> tuple[list[EnvRecipe], str | None]:
    return [EnvRecipe((f"cargo build --offline --tests && {RETOUCH}",), CARGO, image)], None


PACK = LanguagePack(
    name="rust",
    manifests=("Cargo.toml",),
    extensions=(".rs",),
    runners=(CARGO_RUNNER,),
    hints=AgentHints(
        title="Rust",
        image="Debian's rustc and cargo, git",
        install="Fetch and build while you have network (`cargo fetch`, then `cargo build --tests`); the tests run "
        "offline with `--offline`.",
        runners={
            "cargo": RunnerHints(
                targets="`--test <name>` for tests/<name>.rs, `--lib` for tests inside src/",
                naming="tests/<name>.rs (an integration test of the crate's public API)",
                example="tests/example.rs",
                id_form="module::test",
            )
        },
    ),
    images={"swe-forge-rust:bookworm": "1.63", "swe-forge-rust:trixie": "1.85"},
    read_files=(".cargo/config.toml", ".cargo/config", "rust-toolchain", "rust-toolchain.toml"),
    dependency_files=("Cargo.toml", "Cargo.lock"),
    dependencies_fixed=True,
    declared_version=declared_version,
    dependency_problem=dependency_problem,
    recipes=rust_recipes,
    protects=lambda path, new: ".cargo" in PurePosixPath(path).parts,
    test_code=lambda path: PurePosixPath(path).parts[:1] == ("tests",),  # integration tests
    test_file_patterns=(r"(^|/)tests/.*\.rs$",),  # integration tests; unit tests sit in their source files
    ca_env_vars=("CARGO_HTTP_CAINFO",),
    seed_languages=("rust",),
    debian_packages="rustc cargo",
    review_signs=(
        (r"\blink_section\s*=\s*\"\.init_array|#\[ctor\]", "runs code before main"),
        (r"\bcurrent_exe\(\)", "runs the test binary again"),
        (r"\"type\"\s*:\s*\"test\"|\\\"event\\\"|test result: ok", "writes test result lines"),
        (r"\bfrom_raw_fd\(\s*1\b|\blibc::dup2?\b", "writes to standard output behind libtest"),
        (r"custom_test_frameworks|\btest_runner\b", "replaces the test harness"),
    ),
    compiled=True,
    extends_default=True,
    config_probes={
        CARGO_RUNNER.name: ConfigProbe(
            lambda _files: cargo_config.cargo_config, cargo_config.CONFIG_FILES, None, cargo_config.named_files
        )
    },
)
