"""Typed errors of the kruntimes SDK.

Every failure the SDK reports is a :class:`KruntimesError`. Calls through the gateway map its
Connect code and structured details (the table in docs/concepts/gateway.md) to a subclass; calls to
the Kubernetes API map the HTTP status the same way, so ``except NotFound`` works whether a Run is
missing from the API or from the gateway's view:

- UNAUTHENTICATED (401): :class:`Unauthenticated`
- PERMISSION_DENIED (403): :class:`PermissionDenied`
- NOT_FOUND (404): :class:`NotFound`
- ALREADY_EXISTS (409): :class:`AlreadyExists`
- FAILED_PRECONDITION (409): :class:`NotReady`, with the ``RunNotReady`` detail's phase and mode
- INVALID_ARGUMENT (400; the API's 422): :class:`InvalidArgument`
- RESOURCE_EXHAUSTED (429): :class:`Busy`, with ``retry_after``
- RESOURCE_EXHAUSTED with a too-large ``Failure`` (413, 502): :class:`TooLarge`
- UNAVAILABLE (503): :class:`Unavailable`, with ``retry_after``
- DEADLINE_EXCEEDED (504): :class:`DeadlineExceeded`
- UNKNOWN with a ``HandlerError`` detail (500): :class:`HandlerError`, with its fields
"""

from __future__ import annotations

import json
from typing import Any, Mapping

__all__ = [
    "KruntimesError",
    "ConfigError",
    "GatewayUnreachable",
    "Unauthenticated",
    "PermissionDenied",
    "NotFound",
    "AlreadyExists",
    "Conflict",
    "InvalidArgument",
    "NotReady",
    "Busy",
    "TooLarge",
    "Unavailable",
    "DeadlineExceeded",
    "Cancelled",
    "HandlerError",
    "InternalError",
    "WaitTimeout",
    "RunEnded",
]


class KruntimesError(Exception):
    """Base of every error the SDK raises.

    Attributes:
        message: What happened, and usually what to do next (the gateway's own advice).
        code: The Connect code name (``"not_found"``, ``"resource_exhausted"``, …) for gateway
            errors; ``None`` for errors raised by the SDK itself or the Kubernetes API.
        status: The HTTP status of a Kubernetes API error, or the gateway table's status.
        retry_after: Seconds the server suggests waiting before retrying (0 = no suggestion).
        reason: The gateway's ``Failure.Reason`` name (``"REASON_FUNCTION_BUSY"``, …) or the
            Kubernetes status reason, when there is one.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        retry_after: float = 0,
        reason: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.retry_after = retry_after
        self.reason = reason

    def __str__(self) -> str:
        return self.message


class ConfigError(KruntimesError):
    """The client cannot be set up: no kubeconfig or in-cluster credentials, no bearer token to
    send to the gateway, a bad ``via``, an unreadable CA file."""


class GatewayUnreachable(KruntimesError):
    """The gateway cannot be found or reached: no gateway Service, no ready gateway pod, no pod IP
    that answers, or the port-forward could not be opened."""


class Unauthenticated(KruntimesError):
    """No bearer token, or one the cluster rejects (401 / UNAUTHENTICATED)."""


class PermissionDenied(KruntimesError):
    """RBAC refuses the call (403 / PERMISSION_DENIED), or a session path outside the workspace.

    Calling a function needs ``create`` on ``runs/invoke``, driving a session ``create`` on
    ``runs/session`` of that Run.
    """


class NotFound(KruntimesError):
    """No such Run (404 / NOT_FOUND), or a missing path inside a session."""


class AlreadyExists(KruntimesError):
    """A Run of that name exists, or a session file written with ``mode="create"`` exists."""


class Conflict(KruntimesError):
    """The Kubernetes API refused a write because the object changed meanwhile (409 Conflict)."""


class InvalidArgument(KruntimesError):
    """The request is malformed: a Run the API's validation rejects (422), a bad page token (400)."""


class NotReady(KruntimesError):
    """The Run cannot serve the call now (FAILED_PRECONDITION / 409).

    Attributes:
        phase: The Run's phase (``"Pending"``, ``"Succeeded"``, ``"Finalizing"``, …) when the
            gateway said, else ``""``.
        mode: The Run's mode (``"task"``, ``"function"``, ``"session"``) when the gateway said.
    """

    def __init__(self, message: str, *, phase: str = "", mode: str = "", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.phase = phase
        self.mode = mode


class Busy(KruntimesError):
    """The function's queue, the session's queue or the gateway is full (429 /
    RESOURCE_EXHAUSTED). Safe to retry after :attr:`retry_after` seconds."""


class TooLarge(KruntimesError):
    """A request or response body above a limit (413 / 502, RESOURCE_EXHAUSTED). Retrying the
    same call does not help."""


class Unavailable(KruntimesError):
    """The Run's pod could not be reached, its worker crashed, or the gateway could not check the
    token (503 / UNAVAILABLE). Retry after :attr:`retry_after` seconds; a function call that may
    have reached its handler is never retried by the platform."""


class DeadlineExceeded(KruntimesError):
    """The call's deadline passed (504 / DEADLINE_EXCEEDED)."""


class Cancelled(KruntimesError):
    """The call was cancelled (CANCELED)."""


class HandlerError(KruntimesError):
    """The function's handler raised (python) or exited non-zero (bash): UNKNOWN / 500 with a
    ``HandlerError`` detail. The Run stays Ready.

    Attributes:
        type: Exception type, e.g. ``"ValueError"``, or ``"NonZeroExit"`` for bash.
        handler_message: The exception's message.
        traceback: A bounded traceback (python) or the stderr tail (bash).
        exit_code: Exit code of a bash handler (0 for python).
        invocation_id: The invocation's ID, as in the function's logs.
    """

    def __init__(
        self,
        message: str,
        *,
        type: str = "",
        handler_message: str = "",
        traceback: str = "",
        exit_code: int = 0,
        invocation_id: str = "",
        **kw: Any,
    ) -> None:
        super().__init__(message, **kw)
        self.type = type
        self.handler_message = handler_message
        self.traceback = traceback
        self.exit_code = exit_code
        self.invocation_id = invocation_id


class InternalError(KruntimesError):
    """An unexpected failure on the server side (INTERNAL, UNKNOWN without details, 5xx)."""


class WaitTimeout(KruntimesError, TimeoutError):
    """A wait (``runs.wait``, ``wait_ready``, ``result``) gave up before the Run got there. The
    Run keeps going; wait again or cancel it.

    Attributes:
        run: The last version of the Run seen (a :class:`kruntimes.Run`), if any.
    """

    def __init__(self, message: str, *, run: Any = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.run = run


class RunEnded(KruntimesError):
    """A Run ended before it became Ready (``wait_ready``), e.g. a function whose source does not
    load (``RegistrationFailed``).

    Attributes:
        run: The ended Run (a :class:`kruntimes.Run`).
    """

    def __init__(self, message: str, *, run: Any = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.run = run


# --- the gateway's Connect codes -----------------------------------------------------------

_FAILURE_REASONS = {
    1: "REASON_REQUEST_TOO_LARGE",
    2: "REASON_RESPONSE_TOO_LARGE",
    3: "REASON_FUNCTION_BUSY",
    4: "REASON_GATEWAY_BUSY",
    5: "REASON_UNREACHABLE",
    6: "REASON_DEADLINE",
    7: "REASON_WORKER_CRASHED",
}

_BY_CODE: dict[str, type[KruntimesError]] = {
    "unauthenticated": Unauthenticated,
    "permission_denied": PermissionDenied,
    "not_found": NotFound,
    "already_exists": AlreadyExists,
    "failed_precondition": NotReady,
    "invalid_argument": InvalidArgument,
    "out_of_range": InvalidArgument,
    "unavailable": Unavailable,
    "deadline_exceeded": DeadlineExceeded,
    "canceled": Cancelled,
    "aborted": Conflict,
    "internal": InternalError,
    "unknown": InternalError,
    "data_loss": InternalError,
    "unimplemented": InternalError,
}

_HTTP_OF_CODE = {
    "unauthenticated": 401,
    "permission_denied": 403,
    "not_found": 404,
    "already_exists": 409,
    "failed_precondition": 409,
    "invalid_argument": 400,
    "resource_exhausted": 429,
    "unavailable": 503,
    "deadline_exceeded": 504,
    "unknown": 500,
    "internal": 500,
}


def from_gateway(
    code: str,
    message: str,
    details: list[tuple[str, bytes]] | None = None,
    retry_after_header: str | None = None,
) -> KruntimesError:
    """The typed error for one gateway error.

    Args:
        code: Connect code name (``"not_found"``) as in Connect's JSON errors.
        message: The gateway's message (it ends with what to do next).
        details: ``(type name, serialized message)`` pairs, e.g.
            ``("kruntimes.gateway.v1.HandlerError", b"...")``.
        retry_after_header: The ``Retry-After`` header or trailer, if sent.
    """
    from kruntimes.gateway.v1 import function_pb2  # generated; imported late to keep this pure

    retry_after = _seconds(retry_after_header)
    failure_reason: str | None = None
    not_ready: Any = None
    handler: Any = None
    for type_name, value in details or []:
        if type_name.endswith("kruntimes.gateway.v1.Failure"):
            f = function_pb2.Failure.FromString(value)
            failure_reason = _FAILURE_REASONS.get(f.reason)
            if f.retry_after_seconds and not retry_after:
                retry_after = float(f.retry_after_seconds)
        elif type_name.endswith("kruntimes.gateway.v1.RunNotReady"):
            not_ready = function_pb2.RunNotReady.FromString(value)
        elif type_name.endswith("kruntimes.gateway.v1.HandlerError"):
            handler = function_pb2.HandlerError.FromString(value)
    kw: dict[str, Any] = {
        "code": code,
        "status": _HTTP_OF_CODE.get(code),
        "retry_after": retry_after,
        "reason": failure_reason,
    }
    if handler is not None:
        return HandlerError(
            message,
            type=handler.type,
            handler_message=handler.message,
            traceback=handler.traceback,
            exit_code=handler.exit_code,
            invocation_id=handler.invocation_id,
            **kw,
        )
    if code == "failed_precondition":
        return NotReady(
            message,
            phase=not_ready.phase if not_ready is not None else "",
            mode=not_ready.mode if not_ready is not None else "",
            **kw,
        )
    if code == "resource_exhausted":
        if failure_reason in ("REASON_REQUEST_TOO_LARGE", "REASON_RESPONSE_TOO_LARGE"):
            kw["status"] = 413 if failure_reason == "REASON_REQUEST_TOO_LARGE" else 502
            return TooLarge(message, **kw)
        return Busy(message, **kw)
    if code == "deadline_exceeded":
        return DeadlineExceeded(message, **kw)
    return _BY_CODE.get(code, InternalError)(message, **kw)


def from_connect_error(err: Any, headers: Mapping[str, str] | None = None) -> KruntimesError:
    """The typed error for a ``connectrpc.errors.ConnectError`` (and the call's response headers
    and trailers, which carry ``Retry-After``)."""
    code = err.code.value if hasattr(err.code, "value") else str(err.code)
    details = [(d.TypeName(), d.value) for d in err.details]
    retry = None
    if headers:
        retry = headers.get("retry-after")
    return from_gateway(code, err.message, details, retry)


def from_http_json(status: int, body: bytes, headers: Mapping[str, str]) -> KruntimesError:
    """The typed error for a plain-route answer (``{code, reason, message, …}``) of the gateway."""
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        code = {v: k for k, v in _HTTP_OF_CODE.items()}.get(status, "unknown")
        text = body.decode("utf-8", "replace").strip()
        return from_gateway(code, f"gateway answered {status}: {text or 'no body'}", None,
                            headers.get("retry-after"))
    return from_gateway(str(doc.get("code", "unknown")), str(doc.get("message", "")), None,
                        headers.get("retry-after"))


def from_kube_status(status: int, body: str | bytes | None, what: str) -> KruntimesError:
    """The typed error for a failed Kubernetes API call.

    Args:
        status: HTTP status of the API's answer.
        body: The answer's body (a ``metav1.Status`` as JSON, usually).
        what: What the SDK was doing, for the message (``"get run ns/name"``).
    """
    reason = None
    detail = ""
    if body:
        try:
            doc = json.loads(body)
            if isinstance(doc, dict):
                reason = doc.get("reason") or None
                detail = str(doc.get("message") or "")
        except ValueError:
            detail = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    msg = f"{what}: {detail or f'HTTP {status}'}"
    kw: dict[str, Any] = {"status": status, "reason": reason}
    if status == 401:
        return Unauthenticated(f"{msg}; the kubeconfig's credentials were rejected", **kw)
    if status == 403:
        return PermissionDenied(f"{msg}; ask for a Role granting it (see the RBAC section of the SDK docs)", **kw)
    if status == 404:
        return NotFound(msg, **kw)
    if status == 409:
        if reason == "AlreadyExists":
            return AlreadyExists(f"{msg}; choose another name, or leave name unset for a generated one", **kw)
        return Conflict(f"{msg}; read the object again and retry", **kw)
    if status in (400, 422):
        return InvalidArgument(msg, **kw)
    if status == 429:
        return Busy(msg, **kw)
    if status == 504:
        return DeadlineExceeded(msg, **kw)
    if status >= 500:
        return Unavailable(msg, **kw)
    return KruntimesError(msg, **kw)


def _seconds(value: str | None) -> float:
    if not value:
        return 0
    try:
        return max(0.0, float(value))
    except ValueError:
        return 0
