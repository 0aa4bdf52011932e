"""Reading a Run's output from runtimed's container log (the same records ``krt logs`` reads).

runtimed writes one JSON line per line a Run printed: ``msg`` "output" with ``run``, ``runUID``,
``namespace``, ``attempt``, ``stream``, ``line``, plus ``invocation`` (functions) or ``operation``
(sessions). A session's audit records (``audit: true``, msg "session operation") are shown as one
``audit: …`` stderr line each. Everything else runtimed logs is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from .models import LogLine, Run

RUNTIMED_CONTAINER = "runtimed"
RUNTIME_LABEL = "kruntimes.io/runtime"

_AUDIT_KEYS = {
    "level", "time", "msg", "component", "pod", "host", "run", "runUID", "namespace", "attempt",
    "audit", "caller", "op", "result", "durationMs", "operation",
}


@dataclass(frozen=True)
class OutputRecord:
    """One output record of runtimed's log."""

    run_uid: str
    attempt: int
    stream: str
    line: str
    call: str = ""
    #: A session's audit record (not in the status tails).
    audit: bool = False

    def to_line(self, from_tail: bool = False) -> LogLine:
        return LogLine(stream=self.stream, line=self.line, attempt=self.attempt, call=self.call,
                       from_tail=from_tail)


def parse_output_line(text: str) -> OutputRecord | None:
    """The output record in one line of runtimed's log, or None when the line is not one."""
    if not text.startswith("{") or ('"output"' not in text and '"audit"' not in text):
        return None
    try:
        v = json.loads(text)
    except ValueError:
        return None
    if not isinstance(v, dict):
        return None
    if v.get("audit") is True and v.get("msg") == "session operation":
        return _audit(v)
    if v.get("msg") != "output":
        return None
    uid, line, stream, attempt = v.get("runUID"), v.get("line"), v.get("stream"), v.get("attempt")
    if not isinstance(uid, str) or not isinstance(line, str) or stream not in ("stdout", "stderr"):
        return None
    if not isinstance(attempt, int) or isinstance(attempt, bool):
        return None
    call = v.get("invocation") or v.get("operation") or ""
    return OutputRecord(uid, attempt, stream, line, call if isinstance(call, str) else "")


def _audit(v: dict[str, Any]) -> OutputRecord | None:
    uid, op, attempt = v.get("runUID"), v.get("op"), v.get("attempt")
    if not isinstance(uid, str) or not isinstance(op, str):
        return None
    if not isinstance(attempt, int) or isinstance(attempt, bool):
        return None
    args = {k: x for k, x in v.items() if k not in _AUDIT_KEYS}
    took = f" ({_num(v['durationMs'])} ms)" if isinstance(v.get("durationMs"), (int, float)) else ""
    rest = f" {json.dumps(args, separators=(',', ':'), ensure_ascii=False)}" if args else ""
    caller = v.get("caller") if isinstance(v.get("caller"), str) and v.get("caller") else "(unknown)"
    operation = v.get("operation") if isinstance(v.get("operation"), str) else ""
    return OutputRecord(uid, attempt, "stderr",
                        f"audit: {op} by {caller}: {v.get('result')}{took}{rest}", operation, True)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def matches(o: OutputRecord, run_uid: str, attempt: int | None = None, call: str | None = None) -> bool:
    """Whether a record belongs to the Run (and the attempt / call asked for)."""
    return (o.run_uid == run_uid and (attempt is None or o.attempt == attempt)
            and (call is None or o.call == call))


def tail_lines(tail: str | None) -> list[str]:
    """The lines of a status tail, without the empty string after its final newline."""
    if not tail:
        return []
    lines = tail.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def tails(run: Run, call: str | None = None) -> list[LogLine]:
    """``status.stdoutTail`` then ``status.stderrTail`` as log lines (only when no call filter is
    asked for: the tails do not say which call printed a line)."""
    if call is not None:
        return []
    s = run.status
    attempt = run.attempt or (run.assignment or {}).get("attempt", 0)
    return ([LogLine("stdout", t, attempt, "", True) for t in tail_lines(s.get("stdoutTail"))]
            + [LogLine("stderr", t, attempt, "", True) for t in tail_lines(s.get("stderrTail"))])


def since_creation(run: Run) -> str | None:
    """One second before the Run was created (creationTimestamp has 1 s precision), RFC 3339:
    where its output can start in a pod's log."""
    ts = (run.raw.get("metadata") or {}).get("creationTimestamp")
    if not ts:
        return None
    try:
        t = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return (t - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")


def latest_attempt(run: Run) -> int:
    """The Run's newest attempt (0 before it was placed)."""
    return max(run.attempt, int((run.assignment or {}).get("attempt") or 0))


def check_attempt(run: Run, attempt: int | None) -> None:
    """Refuses an attempt the Run never had."""
    from .errors import InvalidArgument

    if attempt is None:
        return
    latest = latest_attempt(run)
    if attempt < 1 or attempt > latest:
        has = f"its attempts are 1–{latest}" if latest else "it has not started"
        raise InvalidArgument(f"run {run.name!r} has no attempt {attempt} ({has})")


def caught_up(run: Run, last: dict[str, str]) -> bool:
    """Whether the last lines streamed per stream are the last lines of the final status tails:
    the follower has printed everything the attempt wrote."""
    s = run.status
    out, err = tail_lines(s.get("stdoutTail")), tail_lines(s.get("stderrTail"))
    return (out[-1] if out else None) == last.get("stdout") and (err[-1] if err else None) == last.get("stderr")


def has_tails(run: Run) -> bool:
    """Whether the Run's status holds output tails."""
    s = run.status
    return bool(s.get("stdoutTail") or s.get("stderrTail"))
