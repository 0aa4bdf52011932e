from kruntimes.runtime.v1 import function_pb2 as _function_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RouteFence(_message.Message):
    __slots__ = ("namespace", "run_name", "run_uid", "pod_uid", "attempt")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    RUN_NAME_FIELD_NUMBER: _ClassVar[int]
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    POD_UID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    run_name: str
    run_uid: str
    pod_uid: str
    attempt: int
    def __init__(self, namespace: _Optional[str] = ..., run_name: _Optional[str] = ..., run_uid: _Optional[str] = ..., pod_uid: _Optional[str] = ..., attempt: _Optional[int] = ...) -> None: ...

class InvokeRequest(_message.Message):
    __slots__ = ("fence", "invocation_id", "body", "content_type", "headers", "timeout_ms")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    FENCE_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    fence: RouteFence
    invocation_id: str
    body: bytes
    content_type: str
    headers: _containers.ScalarMap[str, str]
    timeout_ms: int
    def __init__(self, fence: _Optional[_Union[RouteFence, _Mapping]] = ..., invocation_id: _Optional[str] = ..., body: _Optional[bytes] = ..., content_type: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class InvokeResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: _function_pb2.InvokeResponse
    def __init__(self, result: _Optional[_Union[_function_pb2.InvokeResponse, _Mapping]] = ...) -> None: ...

class RouteFailure(_message.Message):
    __slots__ = ("reason", "pod_uid", "attempt")
    class Reason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        REASON_UNSPECIFIED: _ClassVar[RouteFailure.Reason]
        REASON_WRONG_POD: _ClassVar[RouteFailure.Reason]
        REASON_NOT_SERVED: _ClassVar[RouteFailure.Reason]
        REASON_WRONG_ATTEMPT: _ClassVar[RouteFailure.Reason]
        REASON_DRAINING: _ClassVar[RouteFailure.Reason]
    REASON_UNSPECIFIED: RouteFailure.Reason
    REASON_WRONG_POD: RouteFailure.Reason
    REASON_NOT_SERVED: RouteFailure.Reason
    REASON_WRONG_ATTEMPT: RouteFailure.Reason
    REASON_DRAINING: RouteFailure.Reason
    REASON_FIELD_NUMBER: _ClassVar[int]
    POD_UID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    reason: RouteFailure.Reason
    pod_uid: str
    attempt: int
    def __init__(self, reason: _Optional[_Union[RouteFailure.Reason, str]] = ..., pod_uid: _Optional[str] = ..., attempt: _Optional[int] = ...) -> None: ...
