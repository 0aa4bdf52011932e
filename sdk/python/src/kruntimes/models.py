"""The SDK's plain data classes: a Run as read from the API, a task's result, a function's
response, a session command's result and events, file information and log lines."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "TERMINAL_PHASES",
    "Run",
    "TaskResult",
    "InvokeResult",
    "ExecEvent",
    "ExecResult",
    "FileInfo",
    "LogLine",
]

#: Phases a Run never leaves.
TERMINAL_PHASES = frozenset({"Succeeded", "Failed", "Timeout", "Cancelled"})


@dataclass(frozen=True)
class Run:
    """A Run as the Kubernetes API returned it, with the fields most callers need lifted out.

    Attributes:
        name: ``metadata.name``.
        namespace: ``metadata.namespace``.
        uid: ``metadata.uid``.
        mode: ``"task"``, ``"function"`` or ``"session"``.
        runtime: ``spec.runtime``.
        phase: ``status.phase`` (``"Pending"`` until the controller wrote one).
        reason: ``status.reason`` (a closed set, e.g. ``"NonZeroExit"``), or ``""``.
        message: ``status.message``, or ``""``.
        attempt: ``status.attempt`` (0 before the first).
        resource_version: ``metadata.resourceVersion``.
        raw: The whole object as a dict (``spec``, ``status``, …).
    """

    name: str
    namespace: str
    uid: str
    mode: str
    runtime: str
    phase: str
    reason: str
    message: str
    attempt: int
    resource_version: str
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> Run:
        """Builds a Run from the API's JSON object."""
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        mode_spec = spec.get("mode") or {}
        mode = "function" if "function" in mode_spec else "session" if "session" in mode_spec else "task"
        return cls(
            name=meta.get("name", ""),
            namespace=meta.get("namespace", ""),
            uid=meta.get("uid", ""),
            mode=mode,
            runtime=spec.get("runtime", ""),
            phase=status.get("phase") or "Pending",
            reason=status.get("reason") or "",
            message=status.get("message") or "",
            attempt=int(status.get("attempt") or 0),
            resource_version=meta.get("resourceVersion", ""),
            raw=obj,
        )

    @property
    def status(self) -> dict[str, Any]:
        """``status`` as a dict (empty before the controller wrote one)."""
        return self.raw.get("status") or {}

    @property
    def finished(self) -> bool:
        """Whether the Run reached a terminal phase (Succeeded, Failed, Timeout, Cancelled)."""
        return self.phase in TERMINAL_PHASES

    @property
    def ready(self) -> bool:
        """Whether a function or session Run is serving (phase Ready)."""
        return self.phase == "Ready"

    @property
    def waiting_reason(self) -> str:
        """While Pending: why no pod was assigned yet (``status.waitingReason``), else ``""``."""
        return self.status.get("waitingReason") or ""

    @property
    def assignment(self) -> dict[str, Any] | None:
        """``status.assignment`` (pod, podUID, attempt, node) of the current attempt, if bound."""
        return self.status.get("assignment")


@dataclass(frozen=True)
class TaskResult:
    """How a task Run ended (``runs.result``).

    Attributes:
        name: The Run's name.
        phase: ``Succeeded``, ``Failed``, ``Timeout`` or ``Cancelled``.
        reason: ``Completed``, ``NonZeroExit``, ``Signaled``, ``Timeout``, ``StartFailed``, …
        message: ``status.message``.
        exit_code: The process's exit code, or ``None`` when it did not exit by itself.
        signal: The signal that ended it (``"SIGKILL"``), or ``""``.
        outputs: The ``key=value`` lines the task appended to ``$KRUNTIME_OUTPUTS``.
        stdout_tail: The last 16384 characters of stdout.
        stderr_tail: The last 16384 characters of stderr.
        stdout_truncated: ``stdout_tail`` is only the end of a longer stdout.
        stderr_truncated: ``stderr_tail`` is only the end of a longer stderr.
        attempt: The attempt this result is of.
        run: The whole Run.
    """

    name: str
    phase: str
    reason: str
    message: str
    exit_code: int | None
    signal: str
    outputs: dict[str, str]
    stdout_tail: str
    stderr_tail: str
    stdout_truncated: bool
    stderr_truncated: bool
    attempt: int
    run: Run = field(repr=False, compare=False)

    @property
    def succeeded(self) -> bool:
        """Whether the task exited 0 (phase Succeeded)."""
        return self.phase == "Succeeded"

    @classmethod
    def from_run(cls, run: Run) -> TaskResult:
        """The result fields of a (finished) task Run."""
        s = run.status
        code = s.get("exitCode")
        return cls(
            name=run.name,
            phase=run.phase,
            reason=run.reason,
            message=run.message,
            exit_code=int(code) if code is not None else None,
            signal=s.get("signal") or "",
            outputs=dict(s.get("outputs") or {}),
            stdout_tail=s.get("stdoutTail") or "",
            stderr_tail=s.get("stderrTail") or "",
            stdout_truncated=bool(s.get("stdoutTruncated")),
            stderr_truncated=bool(s.get("stderrTruncated")),
            attempt=run.attempt,
            run=run,
        )


@dataclass(frozen=True)
class InvokeResult:
    """What a function's handler returned (``functions.invoke``).

    Attributes:
        status: The HTTP-style status the handler chose (200 for a plain return value).
        content_type: Content type of ``body``.
        body: The response body.
        headers: Headers the handler set.
        invocation_id: The invocation's ID, as in the function's logs (``runs.logs(call=…)``).
        duration_micros: Time spent in the handler, µs.
    """

    status: int
    content_type: str
    body: bytes
    headers: dict[str, str]
    invocation_id: str
    duration_micros: int

    @property
    def text(self) -> str:
        """``body`` decoded as UTF-8 (invalid bytes replaced)."""
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        """``body`` parsed as JSON (raises ``ValueError`` when it is not JSON)."""
        return json.loads(self.body)


@dataclass(frozen=True)
class ExecEvent:
    """One event of a streamed session command (``Session.exec_stream``).

    ``kind`` is ``"started"`` (first; ``pid``), ``"output"`` (``stream`` and ``data``, in the order
    written per stream) or ``"exited"`` (last; ``reason``, ``exit_code``, ``signal``, ``message``).

    Attributes:
        kind: ``"started"``, ``"output"`` or ``"exited"``.
        operation_id: The operation's ID (for ``Session.cancel_operation`` and ``logs(call=…)``).
        pid: Process ID (started).
        stream: ``"stdout"`` or ``"stderr"`` (output).
        data: The output chunk (output).
        reason: ``"EXITED"``, ``"TIMEOUT"``, ``"CANCELLED"`` or ``"START_FAILED"`` (exited).
        exit_code: Exit code (exited by itself).
        signal: The signal that ended it, e.g. ``"SIGKILL"`` (exited).
        message: Why it could not start, or other detail (exited).
    """

    kind: Literal["started", "output", "exited"]
    operation_id: str
    pid: int = 0
    stream: str = ""
    data: bytes = b""
    reason: str = ""
    exit_code: int = 0
    signal: str = ""
    message: str = ""


@dataclass(frozen=True)
class ExecResult:
    """The collected outcome of a session command (``Session.exec``). A command that exits
    non-zero is not an error: look at :attr:`exit_code` (or pass ``check=True``).

    Attributes:
        exit_code: Exit code (0 when it was killed: see ``signal`` and ``reason``).
        stdout: Everything written to stdout.
        stderr: Everything written to stderr.
        reason: ``"EXITED"``, ``"TIMEOUT"``, ``"CANCELLED"`` or ``"START_FAILED"``.
        signal: The signal that ended it (``""`` when it exited).
        message: Why it could not start, or other detail.
        operation_id: The operation's ID.
    """

    exit_code: int
    stdout: bytes
    stderr: bytes
    reason: str
    signal: str
    message: str
    operation_id: str

    @property
    def ok(self) -> bool:
        """Whether the command exited by itself with code 0."""
        return self.reason == "EXITED" and self.exit_code == 0 and not self.signal

    @property
    def stdout_text(self) -> str:
        """``stdout`` decoded as UTF-8 (invalid bytes replaced)."""
        return self.stdout.decode("utf-8", "replace")

    @property
    def stderr_text(self) -> str:
        """``stderr`` decoded as UTF-8 (invalid bytes replaced)."""
        return self.stderr.decode("utf-8", "replace")


@dataclass(frozen=True)
class FileInfo:
    """One path in a session's workspace.

    Attributes:
        path: Path relative to the workspace (``""`` for the workspace itself).
        name: Last path component.
        type: ``"file"``, ``"directory"``, ``"symlink"`` or ``"other"``.
        size: Size in bytes.
        mode: Permission bits (e.g. ``0o644``).
        modified_micros: Modification time, µs since the Unix epoch.
        link_target: For symlinks, the target as stored.
    """

    path: str
    name: str
    type: str
    size: int
    mode: int
    modified_micros: int
    link_target: str = ""

    @property
    def is_dir(self) -> bool:
        """Whether this is a directory."""
        return self.type == "directory"

    @property
    def is_file(self) -> bool:
        """Whether this is a regular file."""
        return self.type == "file"


@dataclass(frozen=True)
class LogLine:
    """One line a Run printed (``runs.logs``, ``Session.logs``).

    Attributes:
        stream: ``"stdout"`` or ``"stderr"``.
        line: The text, without its newline.
        attempt: The attempt that printed it.
        call: The function invocation or session operation that printed it (``""`` for tasks).
            A session's audit records come as stderr lines starting ``audit: ``.
        from_tail: The line comes from ``status.stdoutTail``/``stderrTail`` because runtimed's log
            records of that attempt are gone (pod deleted, log rotated).
    """

    stream: str
    line: str
    attempt: int
    call: str = ""
    from_tail: bool = False
