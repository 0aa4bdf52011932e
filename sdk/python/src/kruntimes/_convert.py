"""Between the gateway's protobuf messages and the SDK's data classes, and the small pure pieces
both clients share (invoke bodies, exec commands, upload chunking)."""

from __future__ import annotations

import json
import uuid
from typing import Any, Iterable, Iterator, Mapping, Sequence

from kruntimes.gateway.v1 import function_pb2, session_pb2
from kruntimes.runtime.v1 import session_pb2 as rt_session_pb2

from .errors import InvalidArgument
from .models import ExecEvent, ExecResult, FileInfo, InvokeResult

#: Bytes per WriteFile call (below the gateway's default --max-request-bytes of 16 MiB).
UPLOAD_CHUNK = 1024 * 1024

_FILE_TYPES = {1: "file", 2: "directory", 3: "symlink", 4: "other"}
_EXIT_REASONS = {1: "EXITED", 2: "TIMEOUT", 3: "CANCELLED", 4: "START_FAILED"}
WRITE_MODES = {"create": 1, "truncate": 2, "append": 3}


def file_info(pb: Any) -> FileInfo:
    return FileInfo(path=pb.path, name=pb.name, type=_FILE_TYPES.get(pb.type, "other"), size=int(pb.size),
                    mode=int(pb.mode), modified_micros=int(pb.modified_micros), link_target=pb.link_target)


def guess_content_type(body: bytes) -> str:
    """``application/json`` for a body that parses as JSON, else ``application/octet-stream``
    (what ``krt invoke`` sends when told nothing)."""
    if not body:
        return "application/octet-stream"
    try:
        json.loads(body.decode("utf-8"))
        return "application/json"
    except (UnicodeDecodeError, ValueError):
        return "application/octet-stream"


def invoke_request(namespace: str, name: str, body: bytes | str, content_type: str | None,
                   headers: Mapping[str, str] | None) -> Any:
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    hdrs = {k.lower(): str(v) for k, v in (headers or {}).items()}
    if "authorization" in hdrs:
        raise InvalidArgument("headers: authorization is the client's own bearer token; it cannot be set per call")
    ct = content_type or hdrs.pop("content-type", None) or guess_content_type(data)
    hdrs.pop("content-type", None)
    return function_pb2.InvokeRequest(namespace=namespace, run=name, body=data, content_type=ct, headers=hdrs)


def invoke_result(res: Any) -> InvokeResult:
    return InvokeResult(status=res.status, content_type=res.content_type, body=bytes(res.body),
                        headers=dict(res.headers), invocation_id=res.invocation_id,
                        duration_micros=int(res.duration_micros))


def json_body(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def target(namespace: str, name: str) -> Any:
    return session_pb2.SessionTarget(namespace=namespace, run=name)


def command(cmd: str | Sequence[str]) -> Any:
    """A shell line for a string, an argv for a sequence (like ``subprocess`` with and without
    ``shell=True``)."""
    if isinstance(cmd, str):
        if not cmd.strip():
            raise InvalidArgument("cmd is empty")
        return rt_session_pb2.Command(shell=cmd)
    args = [str(a) for a in cmd]
    if not args:
        raise InvalidArgument("cmd is an empty argv")
    return rt_session_pb2.Command(argv=rt_session_pb2.Argv(args=args))


def timeout_ms(param: str, seconds: float | None) -> int:
    if seconds is None:
        return 0
    if seconds <= 0:
        raise InvalidArgument(f"{param}={seconds!r} must be positive")
    return max(1, round(seconds * 1000))


def exec_request(namespace: str, name: str, cmd: str | Sequence[str], env: Mapping[str, str] | None,
                 cwd: str, timeout: float | None, stdin: bytes | str | None) -> Any:
    data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
    return session_pb2.ExecRequest(target=target(namespace, name), command=command(cmd),
                                   env={k: str(v) for k, v in (env or {}).items()}, working_dir=cwd,
                                   timeout_ms=timeout_ms("timeout", timeout), stdin=data)


def exec_event(ev: Any) -> ExecEvent:
    which = ev.WhichOneof("event")
    if which == "started":
        return ExecEvent("started", ev.operation_id, pid=ev.started.pid)
    if which == "output":
        return ExecEvent("output", ev.operation_id, stream=ev.output.stream, data=bytes(ev.output.data))
    x = ev.exited
    return ExecEvent("exited", ev.operation_id, reason=_EXIT_REASONS.get(x.reason, "EXITED"),
                     exit_code=x.exit_code, signal=x.signal, message=x.message)


class ExecCollector:
    """Collects a command's events into an :class:`ExecResult`."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.err = bytearray()
        self.exited: ExecEvent | None = None
        self.operation_id = ""

    def add(self, ev: ExecEvent) -> None:
        self.operation_id = ev.operation_id or self.operation_id
        if ev.kind == "output":
            (self.err if ev.stream == "stderr" else self.out).extend(ev.data)
        elif ev.kind == "exited":
            self.exited = ev

    def result(self) -> ExecResult:
        from .errors import InternalError

        x = self.exited
        if x is None:
            raise InternalError(f"the command's stream ended without its exit (operation {self.operation_id or '?'})")
        return ExecResult(exit_code=x.exit_code, stdout=bytes(self.out), stderr=bytes(self.err), reason=x.reason,
                          signal=x.signal, message=x.message, operation_id=self.operation_id)


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def chunks(data: bytes | str | Iterable[bytes] | Any, size: int) -> Iterator[tuple[bytes, bool]]:
    """``(chunk, last)`` pairs of at most ``size`` bytes from bytes, a str, a binary file or an
    iterable of bytes; a full chunk is only sent once more data follows, so the last one (which
    commits the upload) is never empty unless the whole file is."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        b = bytes(data)
        if not b:
            yield b"", True
            return
        for i in range(0, len(b), size):
            yield b[i:i + size], i + size >= len(b)
        return
    if hasattr(data, "read"):
        source: Iterable[bytes] = iter(lambda: data.read(size), b"")
    else:
        source = data
    pending = bytearray()
    for piece in source:
        if isinstance(piece, str):
            piece = piece.encode("utf-8")
        pending.extend(piece)
        while len(pending) > size:
            yield bytes(pending[:size]), False
            del pending[:size]
    yield bytes(pending), True


def write_mode(mode: str) -> int:
    if mode not in WRITE_MODES:
        raise InvalidArgument(f"mode={mode!r} is not one of create, truncate, append")
    return WRITE_MODES[mode]
