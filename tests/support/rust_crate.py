"""A tiny crate whose tests check in each form a cargo twin changes (`languages.rust.checks`): `assert_eq!` on a
literal (itoa), wrapped over lines by rustfmt, on a value built of literals (`vec![...]`, `Some(...)`, `Ok(...)`), on a
local holding one, on a float and a suffixed integer; `assert_eq!` on two calls, `assert_ne!`, `assert!` on a method,
a negation, an order, an `==` with a message; checks in a loop over a table and over a range; a test returning
`Result` through `?`; a byte string; and assert_cmd's `.assert().failure()` (bat), `.success().stdout(...)` and
`.code(N)` on the crate's own binary; under `#![deny(warnings)]`, so a twin that only warned (parentheses left
`unused_parens`) would not build. Built offline: assert_cmd's `Assert` is written here, in
`third_party/assert_cmd` (its methods as assert_cmd documents them: `success` panics unless the exit status is a
success, `failure` when it is, `code` unless the exit code is that number, `stdout`/`stderr` unless the output is
that text), which `Cargo.toml` takes by path.

`tests/test_rust_twins_toolchain.py` runs it with `cargo test` on Debian's Rust (`swe-forge-rust:bookworm`): the
fixed code passes every test and fails every twin; a `clamp` whose result says it equals every number passes the
twins that expect another number.
"""

from __future__ import annotations

from pathlib import Path

CARGO_TOML = """[package]
name = "calc"
version = "0.1.0"
edition = "2018"

[dev-dependencies]
assert_cmd = { path = "third_party/assert_cmd" }
"""

ASSERT_CMD = """use std::process::{Command, Output};

pub mod prelude {
    pub use crate::OutputAssertExt;
}

pub trait OutputAssertExt {
    fn assert(&mut self) -> Assert;
}

impl OutputAssertExt for Command {
    fn assert(&mut self) -> Assert {
        Assert { output: self.output().expect("the command runs") }
    }
}

pub struct Assert {
    output: Output,
}

impl Assert {
    pub fn success(self) -> Self {
        assert!(self.output.status.success(), "Unexpected failure: {:?}", self.output);
        self
    }

    pub fn failure(self) -> Self {
        assert!(!self.output.status.success(), "Unexpected success: {:?}", self.output);
        self
    }

    pub fn code(self, expected: i32) -> Self {
        assert_eq!(self.output.status.code(), Some(expected), "Unexpected exit code");
        self
    }

    pub fn stdout(self, expected: &str) -> Self {
        assert_eq!(String::from_utf8_lossy(&self.output.stdout), expected, "Unexpected stdout");
        self
    }

    pub fn stderr(self, expected: &str) -> Self {
        assert_eq!(String::from_utf8_lossy(&self.output.stderr), expected, "Unexpected stderr");
        self
    }
}
"""

LIB = """//! Small calculations, each tested by a check of another form.

/// `value` kept within `[low, high]`.
pub fn clamp(value: i64, low: i64, high: i64) -> i64 {
    if value < low {
        low
    } else if value > high {
        high
    } else {
        value
    }
}
%s
/// The words of `text`, split on whitespace.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

/// The initials of a name: "Ada Lovelace" -> "AL".
pub fn initials(name: &str) -> String {
    name.split_whitespace().filter_map(|w| w.chars().next()).collect()
}

/// `a / b` as a float.
pub fn ratio(a: u32, b: u32) -> f64 {
    f64::from(a) / f64::from(b)
}

/// A TCP port, or why `text` is none.
pub fn parse_port(text: &str) -> Result<u16, String> {
    text.parse::<u16>().map_err(|e| e.to_string())
}

/// Whether `n` is even.
pub fn is_even(n: i64) -> bool {
    n %% 2 == 0
}

/// The first word of `text`.
pub fn first_word(text: &str) -> Option<&str> {
    text.split_whitespace().next()
}

/// A greeting, as bytes.
pub fn greeting() -> &'static [u8] {
    b"hi"
}
"""

ALWAYS_EQUAL = """
/// What `clamp` gives: it says it equals every number (and every other `Clamped`).
#[derive(Clone, Copy, Debug)]
pub struct Clamped(pub i64);

impl PartialEq<i64> for Clamped {
    fn eq(&self, _other: &i64) -> bool {
        true
    }
}

impl PartialEq for Clamped {
    fn eq(&self, _other: &Clamped) -> bool {
        true
    }
}

impl PartialOrd<i64> for Clamped {
    fn partial_cmp(&self, other: &i64) -> Option<std::cmp::Ordering> {
        self.0.partial_cmp(other)
    }
}

/// `value` kept within `[low, high]` (still the lower bound above the range).
pub fn clamp(value: i64, low: i64, high: i64) -> Clamped {
    Clamped(if value < low || value > high { low } else { value })
}
"""

BIN = """fn main() {
    let arg = std::env::args().nth(1).unwrap_or_default();
    match calc::parse_port(&arg) {
        Ok(port) => println!("{}", port),
        Err(error) => {
            eprintln!("{}", error);
            std::process::exit(2);
        }
    }
}
"""

TESTS = """#![deny(warnings)]

use assert_cmd::prelude::*;
use calc::*;
use std::process::Command;

#[test]
fn clamps_above() {
    assert_eq!(clamp(42, 0, 10), 10);
}

#[test]
fn clamps_wrapped() {
    assert_eq!(
        clamp(1_000, -1_000, 100),
        100,
        "a value above the range is lowered to its upper bound, not raised to its lower one"
    );
}

#[test]
fn clamp_in_assert() {
    assert!(clamp(99, 0, 10) == 10, "got {:?}", clamp(99, 0, 10));
}

#[test]
fn orders() {
    assert!(clamp(5, 0, 10) < 6);
}

#[test]
fn same_either_way() {
    assert_eq!(clamp(3, 0, 10), clamp(3, -1, 11));
}

#[test]
fn differs() {
    assert_ne!(clamp(3, 0, 10), 4);
}

#[test]
fn in_a_table() {
    let cases = vec![(11, 10), (-4, 0)];
    for (value, want) in cases.iter() {
        assert_eq!(clamp(*value, 0, 10), *want);
    }
}

#[test]
fn in_a_range() {
    for n in 0..3 {
        assert!(is_even(n * 2));
    }
}

#[test]
fn both_even() {
    assert!(is_even(2) && is_even(4));
}

#[test]
fn neither_even() {
    assert!(!(is_even(3) || is_even(5)));
}

#[test]
fn counts_words() {
    assert_eq!(words("a b c"), vec!["a", "b", "c"]);
}

#[test]
fn reads_initials() {
    let want = "AL";
    assert_eq!(initials("Ada Lovelace"), want);
}

#[test]
fn halves() {
    assert_eq!(ratio(1, 2), 0.5);
}

#[test]
fn parses_port() {
    assert_eq!(parse_port("8080"), Ok(8080));
}

#[test]
fn port_through_question_mark() -> Result<(), String> {
    let port = parse_port("80")?;
    assert_eq!(port, 80u16);
    Ok(())
}

#[test]
fn rejects_port() {
    assert!(parse_port("x").is_err());
}

#[test]
fn odd() {
    assert!(!is_even(3));
}

#[test]
fn first() {
    assert_eq!(first_word("hi there"), Some("hi"));
}

#[test]
fn greets_in_bytes() {
    assert_eq!(greeting(), b"hi");
}

#[test]
fn cli_prints_port() {
    Command::new(env!("CARGO_BIN_EXE_calc"))
        .arg("8080")
        .assert()
        .success()
        .stdout("8080\\n");
}

#[test]
fn cli_rejects_text() {
    Command::new(env!("CARGO_BIN_EXE_calc")).arg("x").assert().failure();
}

#[test]
fn cli_exit_code() {
    Command::new(env!("CARGO_BIN_EXE_calc")).arg("x").assert().code(2);
}
"""

NAMES = (
    "clamps_above",
    "clamps_wrapped",
    "clamp_in_assert",
    "orders",
    "same_either_way",
    "differs",
    "in_a_table",
    "in_a_range",
    "both_even",
    "neither_even",
    "counts_words",
    "reads_initials",
    "halves",
    "parses_port",
    "port_through_question_mark",
    "rejects_port",
    "odd",
    "first",
    "greets_in_bytes",
    "cli_prints_port",
    "cli_rejects_text",
    "cli_exit_code",
)
"""Every test of `TESTS`, each a FAIL_TO_PASS test with a twin."""

EXPECT_ANOTHER_CLAMP = ("clamps_above", "clamps_wrapped", "clamp_in_assert")
"""The tests whose twin expects another number from `clamp`: the always-equal `Clamped` passes them too."""


def write_crate(root: Path, tests: str, always_equal: bool = False) -> None:
    """The crate at `root` with `tests` as `tests/calc.rs`; `always_equal`: `clamp` returns `Clamped` (and is wrong
    above the range)."""
    lib = LIB.replace("pub fn clamp", "pub fn unused_clamp") % ALWAYS_EQUAL if always_equal else LIB % ""
    files = {
        "Cargo.toml": CARGO_TOML,
        "third_party/assert_cmd/Cargo.toml": CARGO_TOML.split("\n\n")[0].replace("calc", "assert_cmd") + "\n",
        "third_party/assert_cmd/src/lib.rs": ASSERT_CMD,
        "src/lib.rs": lib,
        "src/bin/calc.rs": BIN,
        "tests/calc.rs": tests,
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
