from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FunctionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FUNCTION_STATE_UNSPECIFIED: _ClassVar[FunctionState]
    FUNCTION_STATE_REGISTERING: _ClassVar[FunctionState]
    FUNCTION_STATE_READY: _ClassVar[FunctionState]
    FUNCTION_STATE_FAILED: _ClassVar[FunctionState]
    FUNCTION_STATE_DRAINING: _ClassVar[FunctionState]
    FUNCTION_STATE_ENDED: _ClassVar[FunctionState]

class FunctionEndReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FUNCTION_END_REASON_UNSPECIFIED: _ClassVar[FunctionEndReason]
    FUNCTION_END_REASON_IDLE_TIMEOUT: _ClassVar[FunctionEndReason]
    FUNCTION_END_REASON_DRAINED: _ClassVar[FunctionEndReason]
    FUNCTION_END_REASON_CANCELLED: _ClassVar[FunctionEndReason]
    FUNCTION_END_REASON_REGISTRATION_FAILED: _ClassVar[FunctionEndReason]

class UnregisterMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    UNREGISTER_MODE_UNSPECIFIED: _ClassVar[UnregisterMode]
    UNREGISTER_MODE_DRAIN: _ClassVar[UnregisterMode]
    UNREGISTER_MODE_CANCEL: _ClassVar[UnregisterMode]
FUNCTION_STATE_UNSPECIFIED: FunctionState
FUNCTION_STATE_REGISTERING: FunctionState
FUNCTION_STATE_READY: FunctionState
FUNCTION_STATE_FAILED: FunctionState
FUNCTION_STATE_DRAINING: FunctionState
FUNCTION_STATE_ENDED: FunctionState
FUNCTION_END_REASON_UNSPECIFIED: FunctionEndReason
FUNCTION_END_REASON_IDLE_TIMEOUT: FunctionEndReason
FUNCTION_END_REASON_DRAINED: FunctionEndReason
FUNCTION_END_REASON_CANCELLED: FunctionEndReason
FUNCTION_END_REASON_REGISTRATION_FAILED: FunctionEndReason
UNREGISTER_MODE_UNSPECIFIED: UnregisterMode
UNREGISTER_MODE_DRAIN: UnregisterMode
UNREGISTER_MODE_CANCEL: UnregisterMode

class RegisterRequest(_message.Message):
    __slots__ = ("run_uid", "run_name", "attempt", "source", "handler", "env", "concurrency", "queue_limit", "max_request_bytes", "max_response_bytes", "invocation_timeout_ms", "idle_timeout_ms", "working_dir")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    RUN_NAME_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    HANDLER_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    QUEUE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    MAX_REQUEST_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_RESPONSE_BYTES_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    IDLE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIR_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    run_name: str
    attempt: int
    source: str
    handler: str
    env: _containers.ScalarMap[str, str]
    concurrency: int
    queue_limit: int
    max_request_bytes: int
    max_response_bytes: int
    invocation_timeout_ms: int
    idle_timeout_ms: int
    working_dir: str
    def __init__(self, run_uid: _Optional[str] = ..., run_name: _Optional[str] = ..., attempt: _Optional[int] = ..., source: _Optional[str] = ..., handler: _Optional[str] = ..., env: _Optional[_Mapping[str, str]] = ..., concurrency: _Optional[int] = ..., queue_limit: _Optional[int] = ..., max_request_bytes: _Optional[int] = ..., max_response_bytes: _Optional[int] = ..., invocation_timeout_ms: _Optional[int] = ..., idle_timeout_ms: _Optional[int] = ..., working_dir: _Optional[str] = ...) -> None: ...

class FunctionRegistration(_message.Message):
    __slots__ = ("run_uid", "run_name", "attempt", "state", "end_reason", "error", "concurrency", "in_flight", "queued", "invocations", "ready_micros", "last_invocation_micros", "ended_micros", "limits")
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    RUN_NAME_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    END_REASON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    INVOCATIONS_FIELD_NUMBER: _ClassVar[int]
    READY_MICROS_FIELD_NUMBER: _ClassVar[int]
    LAST_INVOCATION_MICROS_FIELD_NUMBER: _ClassVar[int]
    ENDED_MICROS_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    run_name: str
    attempt: int
    state: FunctionState
    end_reason: FunctionEndReason
    error: str
    concurrency: int
    in_flight: int
    queued: int
    invocations: int
    ready_micros: int
    last_invocation_micros: int
    ended_micros: int
    limits: FunctionLimits
    def __init__(self, run_uid: _Optional[str] = ..., run_name: _Optional[str] = ..., attempt: _Optional[int] = ..., state: _Optional[_Union[FunctionState, str]] = ..., end_reason: _Optional[_Union[FunctionEndReason, str]] = ..., error: _Optional[str] = ..., concurrency: _Optional[int] = ..., in_flight: _Optional[int] = ..., queued: _Optional[int] = ..., invocations: _Optional[int] = ..., ready_micros: _Optional[int] = ..., last_invocation_micros: _Optional[int] = ..., ended_micros: _Optional[int] = ..., limits: _Optional[_Union[FunctionLimits, _Mapping]] = ...) -> None: ...

class FunctionLimits(_message.Message):
    __slots__ = ("queue_limit", "max_request_bytes", "max_response_bytes", "invocation_timeout_ms", "idle_timeout_ms")
    QUEUE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    MAX_REQUEST_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_RESPONSE_BYTES_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    IDLE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    queue_limit: int
    max_request_bytes: int
    max_response_bytes: int
    invocation_timeout_ms: int
    idle_timeout_ms: int
    def __init__(self, queue_limit: _Optional[int] = ..., max_request_bytes: _Optional[int] = ..., max_response_bytes: _Optional[int] = ..., invocation_timeout_ms: _Optional[int] = ..., idle_timeout_ms: _Optional[int] = ...) -> None: ...

class RegisterResponse(_message.Message):
    __slots__ = ("registration", "created")
    REGISTRATION_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    registration: FunctionRegistration
    created: bool
    def __init__(self, registration: _Optional[_Union[FunctionRegistration, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class StatusRequest(_message.Message):
    __slots__ = ("run_uid",)
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    def __init__(self, run_uid: _Optional[str] = ...) -> None: ...

class StatusResponse(_message.Message):
    __slots__ = ("registration",)
    REGISTRATION_FIELD_NUMBER: _ClassVar[int]
    registration: FunctionRegistration
    def __init__(self, registration: _Optional[_Union[FunctionRegistration, _Mapping]] = ...) -> None: ...

class FunctionServiceListRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FunctionServiceListResponse(_message.Message):
    __slots__ = ("registrations",)
    REGISTRATIONS_FIELD_NUMBER: _ClassVar[int]
    registrations: _containers.RepeatedCompositeFieldContainer[FunctionRegistration]
    def __init__(self, registrations: _Optional[_Iterable[_Union[FunctionRegistration, _Mapping]]] = ...) -> None: ...

class InvokeRequest(_message.Message):
    __slots__ = ("run_uid", "attempt", "invocation_id", "body", "content_type", "headers", "timeout_ms")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    attempt: int
    invocation_id: str
    body: bytes
    content_type: str
    headers: _containers.ScalarMap[str, str]
    timeout_ms: int
    def __init__(self, run_uid: _Optional[str] = ..., attempt: _Optional[int] = ..., invocation_id: _Optional[str] = ..., body: _Optional[bytes] = ..., content_type: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class InvokeResponse(_message.Message):
    __slots__ = ("status", "content_type", "body", "headers", "handler_error", "duration_micros", "queued_micros")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    HANDLER_ERROR_FIELD_NUMBER: _ClassVar[int]
    DURATION_MICROS_FIELD_NUMBER: _ClassVar[int]
    QUEUED_MICROS_FIELD_NUMBER: _ClassVar[int]
    status: int
    content_type: str
    body: bytes
    headers: _containers.ScalarMap[str, str]
    handler_error: HandlerError
    duration_micros: int
    queued_micros: int
    def __init__(self, status: _Optional[int] = ..., content_type: _Optional[str] = ..., body: _Optional[bytes] = ..., headers: _Optional[_Mapping[str, str]] = ..., handler_error: _Optional[_Union[HandlerError, _Mapping]] = ..., duration_micros: _Optional[int] = ..., queued_micros: _Optional[int] = ...) -> None: ...

class HandlerError(_message.Message):
    __slots__ = ("type", "message", "traceback", "exit_code")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TRACEBACK_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    type: str
    message: str
    traceback: str
    exit_code: int
    def __init__(self, type: _Optional[str] = ..., message: _Optional[str] = ..., traceback: _Optional[str] = ..., exit_code: _Optional[int] = ...) -> None: ...

class InvokeFailure(_message.Message):
    __slots__ = ("reason", "retry_after_ms")
    class Reason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        REASON_UNSPECIFIED: _ClassVar[InvokeFailure.Reason]
        REASON_NOT_REGISTERED: _ClassVar[InvokeFailure.Reason]
        REASON_STALE: _ClassVar[InvokeFailure.Reason]
        REASON_NOT_READY: _ClassVar[InvokeFailure.Reason]
        REASON_BUSY: _ClassVar[InvokeFailure.Reason]
        REASON_REQUEST_TOO_LARGE: _ClassVar[InvokeFailure.Reason]
        REASON_RESPONSE_TOO_LARGE: _ClassVar[InvokeFailure.Reason]
        REASON_TIMEOUT: _ClassVar[InvokeFailure.Reason]
        REASON_WORKER_CRASHED: _ClassVar[InvokeFailure.Reason]
        REASON_CANCELLED: _ClassVar[InvokeFailure.Reason]
        REASON_INVALID: _ClassVar[InvokeFailure.Reason]
    REASON_UNSPECIFIED: InvokeFailure.Reason
    REASON_NOT_REGISTERED: InvokeFailure.Reason
    REASON_STALE: InvokeFailure.Reason
    REASON_NOT_READY: InvokeFailure.Reason
    REASON_BUSY: InvokeFailure.Reason
    REASON_REQUEST_TOO_LARGE: InvokeFailure.Reason
    REASON_RESPONSE_TOO_LARGE: InvokeFailure.Reason
    REASON_TIMEOUT: InvokeFailure.Reason
    REASON_WORKER_CRASHED: InvokeFailure.Reason
    REASON_CANCELLED: InvokeFailure.Reason
    REASON_INVALID: InvokeFailure.Reason
    REASON_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    reason: InvokeFailure.Reason
    retry_after_ms: int
    def __init__(self, reason: _Optional[_Union[InvokeFailure.Reason, str]] = ..., retry_after_ms: _Optional[int] = ...) -> None: ...

class UnregisterRequest(_message.Message):
    __slots__ = ("run_uid", "attempt", "mode", "drain_timeout_ms")
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    DRAIN_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    attempt: int
    mode: UnregisterMode
    drain_timeout_ms: int
    def __init__(self, run_uid: _Optional[str] = ..., attempt: _Optional[int] = ..., mode: _Optional[_Union[UnregisterMode, str]] = ..., drain_timeout_ms: _Optional[int] = ...) -> None: ...

class UnregisterResponse(_message.Message):
    __slots__ = ("registration",)
    REGISTRATION_FIELD_NUMBER: _ClassVar[int]
    registration: FunctionRegistration
    def __init__(self, registration: _Optional[_Union[FunctionRegistration, _Mapping]] = ...) -> None: ...

class FunctionServiceWatchRequest(_message.Message):
    __slots__ = ("run_uid", "attempt")
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    attempt: int
    def __init__(self, run_uid: _Optional[str] = ..., attempt: _Optional[int] = ...) -> None: ...

class FunctionServiceWatchResponse(_message.Message):
    __slots__ = ("state", "log", "ended")
    STATE_FIELD_NUMBER: _ClassVar[int]
    LOG_FIELD_NUMBER: _ClassVar[int]
    ENDED_FIELD_NUMBER: _ClassVar[int]
    state: FunctionRegistration
    log: FunctionLog
    ended: FunctionRegistration
    def __init__(self, state: _Optional[_Union[FunctionRegistration, _Mapping]] = ..., log: _Optional[_Union[FunctionLog, _Mapping]] = ..., ended: _Optional[_Union[FunctionRegistration, _Mapping]] = ...) -> None: ...

class FunctionLog(_message.Message):
    __slots__ = ("invocation_id", "stream", "lines", "time_micros")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    TIME_MICROS_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    stream: str
    lines: _containers.RepeatedScalarFieldContainer[str]
    time_micros: int
    def __init__(self, invocation_id: _Optional[str] = ..., stream: _Optional[str] = ..., lines: _Optional[_Iterable[str]] = ..., time_micros: _Optional[int] = ...) -> None: ...
