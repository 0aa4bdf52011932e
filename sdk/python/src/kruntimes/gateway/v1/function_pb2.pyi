from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class InvokeRequest(_message.Message):
    __slots__ = ("namespace", "run", "body", "content_type", "headers")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    run: str
    body: bytes
    content_type: str
    headers: _containers.ScalarMap[str, str]
    def __init__(self, namespace: _Optional[str] = ..., run: _Optional[str] = ..., body: _Optional[bytes] = ..., content_type: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ...) -> None: ...

class InvokeResponse(_message.Message):
    __slots__ = ("status", "content_type", "body", "headers", "invocation_id", "duration_micros")
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
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    DURATION_MICROS_FIELD_NUMBER: _ClassVar[int]
    status: int
    content_type: str
    body: bytes
    headers: _containers.ScalarMap[str, str]
    invocation_id: str
    duration_micros: int
    def __init__(self, status: _Optional[int] = ..., content_type: _Optional[str] = ..., body: _Optional[bytes] = ..., headers: _Optional[_Mapping[str, str]] = ..., invocation_id: _Optional[str] = ..., duration_micros: _Optional[int] = ...) -> None: ...

class HandlerError(_message.Message):
    __slots__ = ("type", "message", "traceback", "exit_code", "invocation_id")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TRACEBACK_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    type: str
    message: str
    traceback: str
    exit_code: int
    invocation_id: str
    def __init__(self, type: _Optional[str] = ..., message: _Optional[str] = ..., traceback: _Optional[str] = ..., exit_code: _Optional[int] = ..., invocation_id: _Optional[str] = ...) -> None: ...

class RunNotReady(_message.Message):
    __slots__ = ("phase", "mode")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    phase: str
    mode: str
    def __init__(self, phase: _Optional[str] = ..., mode: _Optional[str] = ...) -> None: ...

class Failure(_message.Message):
    __slots__ = ("reason", "retry_after_seconds")
    class Reason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        REASON_UNSPECIFIED: _ClassVar[Failure.Reason]
        REASON_REQUEST_TOO_LARGE: _ClassVar[Failure.Reason]
        REASON_RESPONSE_TOO_LARGE: _ClassVar[Failure.Reason]
        REASON_FUNCTION_BUSY: _ClassVar[Failure.Reason]
        REASON_GATEWAY_BUSY: _ClassVar[Failure.Reason]
        REASON_UNREACHABLE: _ClassVar[Failure.Reason]
        REASON_DEADLINE: _ClassVar[Failure.Reason]
        REASON_WORKER_CRASHED: _ClassVar[Failure.Reason]
    REASON_UNSPECIFIED: Failure.Reason
    REASON_REQUEST_TOO_LARGE: Failure.Reason
    REASON_RESPONSE_TOO_LARGE: Failure.Reason
    REASON_FUNCTION_BUSY: Failure.Reason
    REASON_GATEWAY_BUSY: Failure.Reason
    REASON_UNREACHABLE: Failure.Reason
    REASON_DEADLINE: Failure.Reason
    REASON_WORKER_CRASHED: Failure.Reason
    REASON_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    reason: Failure.Reason
    retry_after_seconds: int
    def __init__(self, reason: _Optional[_Union[Failure.Reason, str]] = ..., retry_after_seconds: _Optional[int] = ...) -> None: ...
