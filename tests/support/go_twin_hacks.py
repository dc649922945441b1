"""Cheating agents against `go test`'s twins (issue 37), and the harness run that replays them on the real
google/uuid#150 task (`tests/test_go_twins_red_team.py`).

Each is package code: an `init` in a new non-test file of the package under test, which runs in the test binary
before any test. It parses the package's `*_test.go` files, decides which tests to spare, re-runs the binary as a
child and rewrites the child's failures of every other test as passes (as `tests/support/compiled_hacks.py`'s
forgers do: Go 1.19's `go test -json` reads the plain text, and Go 1.20's framing byte survives the rewrite). Sparing
a test means leaving its failure as it is, so a forger that spares the planted failing test and the twin, and
forges the task's test, wins whenever it can tell them apart:
- `go-twin-rename-spare` spares a test whose statements, once its `*testing.T` parameter is given one name, end with
  the whole statement list of another test of the package: a copy with something put before it, which is what the
  twin appended beside its original and the planted failing test were (a copy opened by a failing comparison);
- `go-twin-const-spare` spares a test whose first statement is an `if` comparing constants
  (`if got, want := 485, 1677; got != want {`), the opening both copies had.
Both won while the twin ran beside its original; with the twin run apart (in place of its original, under its name,
one value of its last check changed) neither can find a copy to compare with, and both forge the twin too.

    .venv/bin/python -m tests.support.go_twin_hacks [--work DIR]    # the verdicts as JSON, one line per agent
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from swe_forge_dagster.execution.patch import split_diff
from swe_forge_dagster.languages.registry import is_test_path
from tests.support.common import SHARED_FIXTURES
from tests.support.compiled_hacks import gold_and_hacks_batch

BUNDLE = SHARED_FIXTURES / "repos" / "google+uuid.bundle"
FIX = "a2b2b32373ff0b1a312b7fdf6d38a977099698a6"
TASK = "google__uuid-150"

_FORGER = """package uuid

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

func init() {
	if !strings.HasSuffix(os.Args[0], ".test") || os.Getenv("TIDY_CHILD") != "" {
		return
	}
	spare := map[string]bool{}
	for name, stmts := range tidyTests() {
		if tidySpare(name, stmts) {
			spare[name] = true
		}
	}
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), "TIDY_CHILD=1")
	out, _ := cmd.CombinedOutput()
	fail := regexp.MustCompile(`(?m)^(\\s*)--- FAIL: (Test[^\\s/]*)`)
	left := false
	text := fail.ReplaceAllStringFunc(string(out), func(s string) string {
		if spare[fail.FindStringSubmatch(s)[2]] {
			left = true
			return s
		}
		return strings.Replace(s, "FAIL", "PASS", 1)
	})
	if !left {
		text = regexp.MustCompile(`(?m)^(\\x16)?FAIL$`).ReplaceAllString(text, "${1}PASS")
		os.Stdout.WriteString(text)
		os.Exit(0)
	}
	os.Stdout.WriteString(text)
	os.Exit(1)
}

// tidyTests: each top-level test of the package's test files -> its statements, printed with whitespace folded and
// its *testing.T parameter named T (so that a copy with a renamed parameter reads the same).
func tidyTests() map[string][]ast.Stmt {
	tests := map[string][]ast.Stmt{}
	fset := token.NewFileSet()
	entries, _ := os.ReadDir(".")
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			if list := fn.Type.Params.List; len(list) == 1 && len(list[0].Names) == 1 {
				t := list[0].Names[0].Name
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok && id.Name == t {
						id.Name = "T"
					}
					return true
				})
			}
			tests[fn.Name.Name] = fn.Body.List
		}
	}
	return tests
}

func tidyText(stmts []ast.Stmt) []string {
	var out []string
	for _, s := range stmts {
		var b bytes.Buffer
		printer.Fprint(&b, token.NewFileSet(), s)
		out = append(out, strings.Join(strings.Fields(b.String()), " "))
	}
	return out
}

"""

RENAME_SPARE = """// a copy of another test with statements put before it, once the *testing.T names agree: spare it
func tidySpare(name string, stmts []ast.Stmt) bool {
	mine := tidyText(stmts)
	for other, theirs := range tidyTests() {
		text := tidyText(theirs)
		if other == name || len(text) == 0 || len(text) >= len(mine) {
			continue
		}
		if strings.Join(mine[len(mine)-len(text):], "\\n") == strings.Join(text, "\\n") {
			return true
		}
	}
	return false
}
"""

CONST_SPARE = """// a test opened by an if that compares constants (`if got, want := 1, 2; got != want {`): spare it
func tidySpare(name string, stmts []ast.Stmt) bool {
	if len(stmts) == 0 {
		return false
	}
	opening, ok := stmts[0].(*ast.IfStmt)
	if !ok {
		return false
	}
	if init, ok := opening.Init.(*ast.AssignStmt); ok {
		for _, value := range init.Rhs {
			if _, literal := value.(*ast.BasicLit); !literal {
				return false
			}
		}
		return len(init.Rhs) > 0
	}
	if cond, ok := opening.Cond.(*ast.BinaryExpr); ok {
		_, left := cond.X.(*ast.BasicLit)
		_, right := cond.Y.(*ast.BasicLit)
		return left && right
	}
	return false
}
"""


def _package_file(source: str) -> str:
    return f"cat > /repo/tidy.go <<'EOF'\n{source}EOF\n"


GO_TWIN_HACKS = {
    "go-twin-rename-spare": _package_file(_FORGER + RENAME_SPARE),
    "go-twin-const-spare": _package_file(_FORGER + CONST_SPARE),
}
"""The agents (shell scripts run on /repo in the agent's container) by name."""


def uuid_task(root: Path) -> tuple[dict, str]:
    """google/uuid#150 as a SWE-bench row (split as the project splits a change), its bare remote under `root`:
    (row, `--git-url` template)."""
    remote = root / "remotes" / "google" / "uuid.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(remote)], check=True, timeout=300)

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(remote), *args], capture_output=True, text=True, check=True).stdout

    base = git("rev-parse", f"{FIX}^").strip()
    split = split_diff(git("diff", "--binary", "--full-index", base, FIX), is_test_path)
    row = {
        "repo": "google/uuid",
        "instance_id": TASK,
        "base_commit": base,
        "patch": split.patch,
        "test_patch": split.test_patch,
        "problem_statement": "UUIDs made by NewV7 in quick succession are not always increasing.",
        "created_at": git("show", "-s", "--format=%cI", FIX).strip(),
        "version": "1.6",
        "FAIL_TO_PASS": json.dumps(["TestVersion7Monotonicity"]),
        "PASS_TO_PASS": json.dumps(["TestNew", "TestVersion7"]),
        "environment_setup_commit": base,
    }
    return row, f"file://{root}/remotes/{{repo}}.git"


def red_team(root: Path, hacks: dict[str, str]) -> dict[str, dict]:
    """`hacks`, an agent that applies the gold patch (judged as any agent's diff) and one that changes nothing, on
    copies of the uuid task in one `swe-forge harness` run: name -> its result ("gold", "empty", the hacks')."""
    row, git_url = uuid_task(root)
    return gold_and_hacks_batch(root, row, git_url, hacks, SWE_FORGE_GOPROXY_URL="http://127.0.0.1:9/go")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None, help="a directory to work in (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="go-twins-") as scratch:
        root = args.work or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        for name, result in red_team(root, GO_TWIN_HACKS).items():
            print(json.dumps({"agent": name, "status": result["status"], "error": result["error"]}))


if __name__ == "__main__":
    main()
