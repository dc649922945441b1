"""A JavaScript test run's effective configuration, computed by npm's and the runner's own loaders, to compare before
and after a diff.

mocha, jest and vitest take options from more than one place (rc files, `package.json` keys, `--config`), and npm
reads settings from the project's `.npmrc` that change how `npx` runs the runner (`node-options` puts a `--require`
into every Node process, `script-shell` picks the shell). One line of configuration in a place no name list
covers is enough to run code before any test. So the verification container asks the loaders themselves:
- npm's `npm config list --json` (every config layer, the project's `.npmrc` included);
- mocha's `loadOptions` (what `mocha` calls at start-up: every rc file, the `package.json` key, the arguments);
- for jest, `jest --ci --showConfig` (the resolved projects: config file or `package.json` key, presets, transforms,
  setup files, environment, runner, reporters) and babel's `loadPartialConfig` for each test file, as babel-jest
  calls it (root and file-relative config: `babel.config.*`, `.babelrc*`, `package.json`'s `babel` key, with every
  plugin and preset resolved to its file);
- the `package.json` keys the runners and Node read (`jest`, `mocha`, `vitest`, `babel`, `type`, `imports`).
It asks after every diff, whatever files the diff changed: no list of names decides whether a source is looked at.
The harness compares the answer of the sanity container (no agent code) with the answer after the diff, like
pytest's (`languages.python.config`): a difference resets the configuration files the diff changed, and one that remains
makes the task `unresolved` with the reason. Vitest's own resolution (vite's config loader) is not asked: its config
files are protected by name (`node.RUNNER_CONFIG`), and the threat model (docs/harness.md) says so.

Pack-private to the Node pack (`languages.node`); the harness calls it for mocha, jest and vitest tasks.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from swe_forge_dagster.execution.config_files import files_named
from swe_forge_dagster.execution.repo_box import REPO_DIR, WORK_DIR, exec_demux, put_files
from swe_forge_dagster.execution.sandbox import Sandbox

INSTALLED = ("node_modules",)
"""Where installed packages sit: their files are never the repository's (tests it runs, or configuration)."""

NODE_PROBE = """const fs = require('fs');
const path = require('path');
const childProcess = require('child_process');
const [runner, ...files] = process.argv.slice(2);
const here = { paths: [process.cwd()] };
const out = {};
function ask(name, read) {
  try {
    out[name] = read();
  } catch (error) {
    out[name] = error && error.code === 'MODULE_NOT_FOUND' ? null : 'unreadable: ' + String(error && error.message);
  }
}
ask('mocha', () => {
  const loaded = require(require.resolve('mocha/lib/cli/options', here)).loadOptions([]);
  delete loaded._;
  return loaded;
});
if (runner === 'jest') {
  ask('jest', () => {
    const bin = require.resolve('jest/bin/jest', here);
    const shown = childProcess.execFileSync(process.execPath, [bin, '--ci', '--showConfig'], { maxBuffer: 64 << 20 });
    const found = JSON.parse(shown.toString('utf8'));
    if (found.globalConfig) delete found.globalConfig.seed; // drawn per start (jest 29.2+), not configured
    return found;
  });
  ask('babel', () => {
    const babel = require(require.resolve('@babel/core', here));
    const item = (i) => [i.file ? i.file.resolved : i.name || null, i.options === undefined ? null : i.options];
    return files.map((file) => {
      const options = { filename: path.resolve(file), cwd: process.cwd(), caller: { name: 'babel-jest' } };
      const found = babel.loadPartialConfig(options);
      return found && { babelrc: found.babelrc || null, config: found.config || null,
        plugins: found.options.plugins.map(item), presets: found.options.presets.map(item) };
    });
  });
}
try {
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
  out.package = { jest: pkg.jest, mocha: pkg.mocha, vitest: pkg.vitest, babel: pkg.babel, type: pkg.type,
    imports: pkg.imports };
} catch (error) {
  out.package = 'unreadable';
}
process.stdout.write(JSON.stringify(out) + '\\n');
"""
PROBE_PATH = f"{WORK_DIR}/node-config-probe.js"
CONFIG_FILES = frozenset({"package.json", ".npmrc", ".yarnrc", ".yarnrc.yml"})
"""What is reset when the configuration differs after the diff (the runners' rc files are protected by name)."""
NPM_CONFIG = "timeout 60 npm config list --json 2>/dev/null || echo null"


def node_config(box: Sandbox, runner: str, files: Sequence[str]) -> dict[str, Any] | None:
    """The effective configuration of a `runner` (mocha, jest, vitest) run of `files` in `box`'s /repo (`npm`'s and
    the runner's loaders), or None when Node cannot answer."""
    put_files(box, {PROBE_PATH: NODE_PROBE.encode()})
    words = " ".join(shlex.quote(word) for word in (runner, *files))
    script = f"cd {REPO_DIR} && timeout 120 node {PROBE_PATH} {words} && {NPM_CONFIG}"
    exit_code, stdout, _stderr = exec_demux(box, ["bash", "-c", script])
    if exit_code != 0:
        return None
    text = stdout.decode("utf-8", "replace")
    first, _, rest = text.partition("\n")
    try:
        found = json.loads(first)
        npm = json.loads(rest) if rest.strip() else None
    except ValueError:
        return None
    if isinstance(npm, dict):  # where npm was asked from and when, not what it does
        for key in ("cwd", "prefix", "globalconfig", "userconfig", "cache", "logs-dir", "npm-version", "user-agent"):
            npm.pop(key, None)
    found["npm"] = npm
    return found


JEST_CODE_KEYS = (
    "setupFiles",
    "setupFilesAfterEnv",
    "testEnvironment",
    "transform",
    "reporters",
    "globalSetup",
    "globalTeardown",
    "testRunner",
    "testSequencer",
    "runner",
    "resolver",
    "snapshotResolver",
    "snapshotSerializers",
    "watchPlugins",
    "dependencyExtractor",
)
"""The keys of jest's answer (a project's or the global config) that name code jest runs around the tests; not
`moduleNameMapper` or `collectCoverageFrom`, which name the package's own files."""
MOCHA_CODE_KEYS = ("require", "file", "reporter", "ui")


def named_files(answer: object) -> frozenset[str]:
    """The files in /repo that the runners' loaders name as code they run around the tests (jest's set-up files,
    environment, transforms, reporters, runner, resolvers; mocha's `require`, `file`, reporter and interface; babel's
    config files, plugins and presets): configuration, whatever they are called."""
    if not isinstance(answer, dict):
        return frozenset()
    picked: list[object] = []
    jest = answer.get("jest")
    if isinstance(jest, dict):
        for config in [*(jest.get("configs") or []), jest.get("globalConfig") or {}]:
            if isinstance(config, dict):
                picked += [config.get(key) for key in JEST_CODE_KEYS]
    mocha = answer.get("mocha")
    if isinstance(mocha, dict):
        picked += [mocha.get(key) for key in MOCHA_CODE_KEYS]
    picked.append(answer.get("babel"))
    return files_named(picked, INSTALLED)
