"""Run manifests for task, function and session Runs, checked before they are sent so a mistake
is reported with the SDK's parameter names (the API's validation rules stay the authority)."""

from __future__ import annotations

import re
import time
from typing import Any, Mapping, Sequence

from .errors import InvalidArgument

API_VERSION = "kruntimes.io/v1alpha1"
GROUP = "kruntimes.io"
VERSION = "v1alpha1"
PLURAL = "runs"
CREATED_MICROS = "kruntimes.io/created-micros"

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HANDLER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$.]*$")

INLINE_SOURCE_MAX = 256 * 1024
MAX_ATTEMPTS = 10

Duration = str | int | float
"""A duration: an API string (``"30s"``, ``"1h30m"``) or seconds as a number."""


def duration(param: str, value: Duration) -> str:
    """An API duration string from a string or a number of seconds."""
    if isinstance(value, bool):
        raise InvalidArgument(f"{param}={value!r} is not a duration; e.g. 30, '30s', '5m'")
    if isinstance(value, (int, float)):
        if value <= 0:
            raise InvalidArgument(f"{param}={value!r} must be positive")
        ms = round(value * 1000)
        return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"
    if not isinstance(value, str) or not _DURATION.match(value):
        raise InvalidArgument(f"{param}={value!r} is not a duration; e.g. 30, '30s', '5m', '1h30m'")
    return value


def _check_name(name: str | None) -> None:
    if name is not None and (not _NAME.match(name) or len(name) > 253):
        raise InvalidArgument(
            f"name={name!r} is not a valid Run name: lower-case letters, digits, '-' and '.'"
        )


def _env(env: Mapping[str, str] | None) -> list[dict[str, str]] | None:
    if not env:
        return None
    out = []
    for k, v in env.items():
        if not _ENV.match(k):
            raise InvalidArgument(
                f"env name {k!r} is not valid: letters, digits and '_', not starting with a digit"
            )
        out.append({"name": k, "value": str(v)})
    return out


def _meta(namespace: str, name: str | None, generate: str, labels: Mapping[str, str] | None,
          annotations: Mapping[str, str] | None) -> dict[str, Any]:
    _check_name(name)
    meta: dict[str, Any] = {"namespace": namespace}
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = generate
    meta["annotations"] = {**(annotations or {}), CREATED_MICROS: str(time.time_ns() // 1000)}
    if labels:
        meta["labels"] = dict(labels)
    return meta


def _common(spec: dict[str, Any], env: Mapping[str, str] | None, timeout: Duration | None,
            retries: int | None, ttl_seconds: int | None) -> None:
    e = _env(env)
    if e:
        spec["env"] = e
    if timeout is not None:
        spec["timeout"] = duration("timeout", timeout)
    if retries is not None:
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries < MAX_ATTEMPTS:
            raise InvalidArgument(f"retries={retries!r} must be a whole number from 0 to {MAX_ATTEMPTS - 1}")
        if retries:
            spec["retryPolicy"] = {"maxAttempts": retries + 1}
    if ttl_seconds is not None:
        if isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, int) or ttl_seconds < 0:
            raise InvalidArgument(f"ttl_seconds={ttl_seconds!r} must be a whole number of seconds ≥ 0")
        spec["ttlSecondsAfterFinished"] = ttl_seconds


def _source(param: str, source: str) -> dict[str, str]:
    if not source:
        raise InvalidArgument(f"{param} is empty")
    if len(source) > INLINE_SOURCE_MAX:
        raise InvalidArgument(
            f"{param} has {len(source)} characters, more than the {INLINE_SOURCE_MAX} an inline source may hold"
        )
    return {"inline": source}


def task_run(
    namespace: str,
    runtime: str,
    *,
    script: str | None = None,
    entrypoint: str | None = None,
    args: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    name: str | None = None,
    timeout: Duration | None = None,
    retries: int | None = None,
    ttl_seconds: int | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The manifest of a task Run (see ``Runs.create_task``)."""
    if not runtime:
        raise InvalidArgument("runtime is required (e.g. 'bash' or 'python')")
    if script is not None and (entrypoint is not None or args):
        raise InvalidArgument(
            "script is a standalone inline script: it takes no entrypoint or args "
            "(pass values through env), or drop script and name a script file with entrypoint"
        )
    if script is None and entrypoint is None and not args:
        raise InvalidArgument(
            "nothing to run: give script (an inline script), entrypoint (a script file in the "
            "runtime container, with args) or args (shell commands)"
        )
    if isinstance(args, str):
        raise InvalidArgument("args is a list of strings, not one string")
    spec: dict[str, Any] = {"runtime": runtime, "mode": {"task": {}}}
    if script is not None:
        spec["source"] = _source("script", script)
    if entrypoint is not None:
        spec["mode"]["task"]["entrypoint"] = entrypoint
    if args:
        spec["mode"]["task"]["args"] = [str(a) for a in args]
    _common(spec, env, timeout, retries, ttl_seconds)
    return {
        "apiVersion": API_VERSION,
        "kind": "Run",
        "metadata": _meta(namespace, name, f"{runtime}-", labels, annotations),
        "spec": spec,
    }


def function_run(
    namespace: str,
    runtime: str,
    source: str,
    *,
    handler: str | None = None,
    concurrency: int | None = None,
    idle_timeout: Duration | None = None,
    invocation_timeout: Duration | None = None,
    max_request_bytes: int | None = None,
    max_response_bytes: int | None = None,
    env: Mapping[str, str] | None = None,
    name: str | None = None,
    timeout: Duration | None = None,
    retries: int | None = None,
    ttl_seconds: int | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The manifest of a function Run (see ``Runs.create_function``)."""
    if not runtime:
        raise InvalidArgument("runtime is required (e.g. 'bash' or 'python')")
    mode: dict[str, Any] = {}
    if handler is not None:
        if not _HANDLER.match(handler):
            raise InvalidArgument(f"handler={handler!r} is not a function name")
        mode["handler"] = handler
    if concurrency is not None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= 64:
            raise InvalidArgument(f"concurrency={concurrency!r} must be a whole number from 1 to 64")
        mode["concurrency"] = concurrency
    if idle_timeout is not None:
        mode["idleTimeout"] = duration("idle_timeout", idle_timeout)
    if invocation_timeout is not None:
        mode["invocationTimeout"] = duration("invocation_timeout", invocation_timeout)
    for param, key, v in (("max_request_bytes", "maxRequestBytes", max_request_bytes),
                          ("max_response_bytes", "maxResponseBytes", max_response_bytes)):
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 16 * 1024 * 1024:
                raise InvalidArgument(f"{param}={v!r} must be a byte count from 1 to 16777216 (16 MiB)")
            mode[key] = v
    spec: dict[str, Any] = {"runtime": runtime, "mode": {"function": mode},
                            "source": _source("source", source)}
    _common(spec, env, timeout, retries, ttl_seconds)
    return {
        "apiVersion": API_VERSION,
        "kind": "Run",
        "metadata": _meta(namespace, name, f"{runtime}-fn-", labels, annotations),
        "spec": spec,
    }


def session_run(
    namespace: str,
    runtime: str,
    *,
    idle_timeout: Duration | None = None,
    default_operation_timeout: Duration | None = None,
    max_operation_timeout: Duration | None = None,
    max_queued_operations: int | None = None,
    env: Mapping[str, str] | None = None,
    name: str | None = None,
    timeout: Duration | None = None,
    ttl_seconds: int | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The manifest of a session Run (see ``Runs.create_session``)."""
    if not runtime:
        raise InvalidArgument("runtime is required (e.g. 'bash' or 'python')")
    mode: dict[str, Any] = {}
    if idle_timeout is not None:
        mode["idleTimeout"] = duration("idle_timeout", idle_timeout)
    if default_operation_timeout is not None:
        mode["defaultOperationTimeout"] = duration("default_operation_timeout", default_operation_timeout)
    if max_operation_timeout is not None:
        mode["maxOperationTimeout"] = duration("max_operation_timeout", max_operation_timeout)
    if max_queued_operations is not None:
        if (isinstance(max_queued_operations, bool) or not isinstance(max_queued_operations, int)
                or not 1 <= max_queued_operations <= 1024):
            raise InvalidArgument(
                f"max_queued_operations={max_queued_operations!r} must be a whole number from 1 to 1024"
            )
        mode["maxQueuedOperations"] = max_queued_operations
    spec: dict[str, Any] = {"runtime": runtime, "mode": {"session": mode}}
    _common(spec, env, timeout, None, ttl_seconds)
    return {
        "apiVersion": API_VERSION,
        "kind": "Run",
        "metadata": _meta(namespace, name, f"{runtime}-session-", labels, annotations),
        "spec": spec,
    }


def termination_patch(mode: str) -> dict[str, Any]:
    """The merge patch that asks a Run to end (``Immediate`` or ``Drain``)."""
    return {"spec": {"termination": {"mode": mode}}}
