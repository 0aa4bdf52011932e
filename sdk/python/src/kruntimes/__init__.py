"""kruntimes: run tasks, call functions and drive sessions on warm Kubernetes pods.

The synchronous :class:`Client` and the asyncio :class:`AsyncClient` share one shape::

    client.runs       create_task / create_function / create_session / create, get, list,
                      wait, wait_ready, result, logs, cancel, delete
    client.functions  invoke, invoke_json
    client.sessions   create, open → Session: exec, exec_stream, read_file, write_file,
                      list_files, stat, remove, make_dir, rename, logs, close, cancel

Errors are :class:`KruntimesError` subclasses (:mod:`kruntimes.errors`).
"""

from .aio import AsyncClient, AsyncSession
from .client import Client, GatewayInfo, Session
from .errors import (
    AlreadyExists,
    Busy,
    Cancelled,
    ConfigError,
    Conflict,
    DeadlineExceeded,
    GatewayUnreachable,
    HandlerError,
    InternalError,
    InvalidArgument,
    KruntimesError,
    NotFound,
    NotReady,
    PermissionDenied,
    RunEnded,
    TooLarge,
    Unauthenticated,
    Unavailable,
    WaitTimeout,
)
from .models import ExecEvent, ExecResult, FileInfo, InvokeResult, LogLine, Run, TaskResult

__version__ = "0.1.0"

__all__ = [
    "Client",
    "AsyncClient",
    "Session",
    "AsyncSession",
    "GatewayInfo",
    "Run",
    "TaskResult",
    "InvokeResult",
    "ExecEvent",
    "ExecResult",
    "FileInfo",
    "LogLine",
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
