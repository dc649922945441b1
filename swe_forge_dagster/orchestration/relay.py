"""TCP relays that carry the deployment's loopback services to worker hosts on a private network.

The services of `deploy/start` (Postgres, the S3 store, the registry, the broker) listen on 127.0.0.1, and every URL
the project hands out names them there. A worker host (`deploy/hosts`: a container with its own Docker engine, on a
private network) has its own loopback, so two relays join them, each URL unchanged:

    host side:  <private network's gateway>:PORT  ->  127.0.0.1:PORT   (only from the worker hosts' addresses)
    in a host:  127.0.0.1:PORT                    ->  <gateway>:PORT

The host-side relay answers only the peers it is given (the worker hosts' private network): a gateway address is
reachable from every container of this machine, and the task sandboxes run a repository's code. Inside a worker
host, its engine's containers are kept off the gateway (`deploy/host/entrypoint`), so only the host's own processes
and the step containers that share its network reach the services, through its loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import os
import re
import signal
import sys
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

CHUNK = 1 << 16
_URL = re.compile(r"[a-z][a-z0-9+.-]*://(?:[^@/\s]*@)?(?P<host>\[[^\]]*\]|[^:/\s]+)(?::(?P<port>\d+))?", re.IGNORECASE)


@dataclass(frozen=True)
class Route:
    """Listen on `listen_host:port`, forward to `target_host:target_port`."""

    listen_host: str
    port: int
    target_host: str
    target_port: int

    @classmethod
    def parse(cls, text: str, listen_host: str, target_host: str) -> Route:
        """`PORT` or `PORT:TARGET_PORT`; ValueError names the bad text."""
        first, _, second = text.partition(":")
        try:
            port, target = int(first), int(second or first)
        except ValueError:
            raise ValueError(f"not a port or PORT:TARGET_PORT: {text!r}") from None
        if not (0 < port < 65536 and 0 < target < 65536):
            raise ValueError(f"port out of range: {text!r}")
        return cls(listen_host, port, target_host, target)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        if writer.can_write_eof():
            with contextlib.suppress(OSError):
                writer.write_eof()


Networks = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]


def _admitted(peer: object, allowed: Networks | None) -> bool:
    if allowed is None:
        return True
    try:
        address = ipaddress.ip_address(peer[0])  # type: ignore[index]
    except (TypeError, IndexError, ValueError):
        return False
    return any(address in network for network in allowed)


async def _serve_one(route: Route, allowed: Networks | None) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        if not _admitted(peer, allowed):
            writer.close()
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(route.target_host, route.target_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        for stream in (writer, upstream_writer):
            stream.close()

    return await asyncio.start_server(handle, route.listen_host, route.port, reuse_address=True)


async def serve(routes: Sequence[Route], allowed: Collection[str] | None = None) -> None:
    """Relay every route until cancelled (SIGTERM/SIGINT end it cleanly when run as a program)."""
    only = tuple(ipaddress.ip_network(a, strict=False) for a in allowed) if allowed is not None else None
    servers = [await _serve_one(route, only) for route in routes]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print("relaying " + ", ".join(f"{r.listen_host}:{r.port}->{r.target_host}:{r.target_port}" for r in routes))
    sys.stdout.flush()
    try:
        await stop.wait()
    finally:
        for server in servers:
            server.close()


def loopback_ports(values: Iterable[str]) -> list[int]:
    """The ports of every loopback URL among `values` (settings: the deployment's services, and twins or mirrors a
    user runs on this machine), so that every URL a host is handed still answers on its own loopback."""
    ports: list[int] = []
    for value in values:
        for match in _URL.finditer(value):
            host, port = match.group("host").strip("[]"), match.group("port")
            with contextlib.suppress(ValueError):
                if ipaddress.ip_address(host).is_loopback and port and int(port) not in ports:
                    ports.append(int(port))
            if host == "localhost" and port and int(port) not in ports:
                ports.append(int(port))
    return ports


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["ports"]:  # `ports NAME...`: the loopback ports the named variables' URLs use
        print(" ".join(str(p) for p in loopback_ports(os.environ.get(name, "") for name in args_list[1:])))
        return 0
    parser = argparse.ArgumentParser(prog="python -m swe_forge_dagster.orchestration.relay", description=__doc__)
    parser.add_argument("--listen", required=True, help="the address to listen on")
    parser.add_argument("--target", required=True, help="the address to forward to")
    parser.add_argument("--allow", action="append", help="only peers in this network (repeatable; default: any)")
    parser.add_argument("ports", nargs="+", help="PORT or PORT:TARGET_PORT")
    args = parser.parse_args(args_list)
    if args.listen in ("", "0.0.0.0", "::"):
        parser.error("--listen: one address of this machine (a wildcard would open the services to every network)")
    try:
        routes = [Route.parse(text, args.listen, args.target) for text in args.ports]
        allowed = [str(ipaddress.ip_network(a, strict=False)) for a in args.allow] if args.allow else None
    except ValueError as exc:
        parser.error(str(exc))
    asyncio.run(serve(routes, allowed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
