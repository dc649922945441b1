"""A JavaScript test run's effective configuration, computed by npm's and the runner's own loaders, to compare before
and after a diff.

mocha, jest and vitest take options from more than one place (rc files, `package.json` keys, `--config`), and npm
reads settings from the project's `.npmrc` that change how `npx` runs the runner (`node-options` puts a `--require`
into every Node process, `script-shell` picks the shell). One line of configuration in a place no name list
covers is enough to run code before any test. So the verification container asks the loaders themselves: mocha's
`loadOptions` (what `mocha` calls at start-up: every rc file, the `package.json` key, the arguments), npm's
`npm config list --json` (every config layer, the project's `.npmrc` included), and what jest and vitest read from
`package.json` (`jest`, `vitest` keys, `type`, `imports`: their config files are protected by name, and jest's only
other source is that key). The harness compares the answer of the sanity container (no agent code) with the
answer after the diff, like pytest's (`python_config`): a difference resets the configuration files the diff
changed, and one that remains makes the task `unresolved` with the reason.

Pack-private to the Node pack (`languages.node`); the harness calls it for mocha, jest and vitest tasks.
"""

from __future__ import annotations

import json
from typing import Any

from swe_forge_dagster.execution.repo_box import REPO_DIR, WORK_DIR, exec_demux, put_files
from swe_forge_dagster.execution.sandbox import Sandbox

NODE_PROBE = """const fs = require('fs');
const out = {};
try {
  const options = require(require.resolve('mocha/lib/cli/options', { paths: [process.cwd()] }));
  const loaded = options.loadOptions([]);
  delete loaded._;
  out.mocha = loaded;
} catch (error) {
  out.mocha = error && error.code === 'MODULE_NOT_FOUND' ? null : 'unreadable: ' + String(error && error.message);
}
try {
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
  out.package = { jest: pkg.jest, mocha: pkg.mocha, vitest: pkg.vitest, type: pkg.type, imports: pkg.imports };
} catch (error) {
  out.package = 'unreadable';
}
process.stdout.write(JSON.stringify(out) + '\\n');
"""
PROBE_PATH = f"{WORK_DIR}/node-config-probe.js"
TRIGGERS = frozenset({"package.json", ".npmrc", ".yarnrc", ".yarnrc.yml"})
"""Files whose change makes the harness ask the loaders again (rc files of the runners are protected by name)."""
CONFIG_FILES = TRIGGERS
"""What is reset when the configuration differs after the diff."""
NPM_CONFIG = "npm config list --json 2>/dev/null || echo null"


def node_config(box: Sandbox) -> dict[str, Any] | None:
    """The effective configuration of a JavaScript test run in `box`'s /repo (`npm` and the runner's loaders), or
    None when Node cannot answer."""
    put_files(box, {PROBE_PATH: NODE_PROBE.encode()})
    script = f"cd {REPO_DIR} && node {PROBE_PATH} && {NPM_CONFIG}"
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
