from kruntimes.runtime.v1 import session_pb2 as _session_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SessionTarget(_message.Message):
    __slots__ = ("namespace", "run")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    run: str
    def __init__(self, namespace: _Optional[str] = ..., run: _Optional[str] = ...) -> None: ...

class ExecRequest(_message.Message):
    __slots__ = ("target", "command", "env", "working_dir", "timeout_ms", "stdin")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TARGET_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIR_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    STDIN_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    command: _session_pb2.Command
    env: _containers.ScalarMap[str, str]
    working_dir: str
    timeout_ms: int
    stdin: bytes
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., command: _Optional[_Union[_session_pb2.Command, _Mapping]] = ..., env: _Optional[_Mapping[str, str]] = ..., working_dir: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., stdin: _Optional[bytes] = ...) -> None: ...

class ExecResponse(_message.Message):
    __slots__ = ("operation_id", "started", "output", "exited")
    OPERATION_ID_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    EXITED_FIELD_NUMBER: _ClassVar[int]
    operation_id: str
    started: _session_pb2.ExecStarted
    output: _session_pb2.ExecOutput
    exited: _session_pb2.ExecExited
    def __init__(self, operation_id: _Optional[str] = ..., started: _Optional[_Union[_session_pb2.ExecStarted, _Mapping]] = ..., output: _Optional[_Union[_session_pb2.ExecOutput, _Mapping]] = ..., exited: _Optional[_Union[_session_pb2.ExecExited, _Mapping]] = ...) -> None: ...

class CancelOperationRequest(_message.Message):
    __slots__ = ("target", "operation_id")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    OPERATION_ID_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    operation_id: str
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., operation_id: _Optional[str] = ...) -> None: ...

class CancelOperationResponse(_message.Message):
    __slots__ = ("cancelled",)
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    cancelled: bool
    def __init__(self, cancelled: _Optional[bool] = ...) -> None: ...

class StartProcessRequest(_message.Message):
    __slots__ = ("target", "process_id", "command", "env", "working_dir")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIR_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    process_id: str
    command: _session_pb2.Command
    env: _containers.ScalarMap[str, str]
    working_dir: str
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., process_id: _Optional[str] = ..., command: _Optional[_Union[_session_pb2.Command, _Mapping]] = ..., env: _Optional[_Mapping[str, str]] = ..., working_dir: _Optional[str] = ...) -> None: ...

class StartProcessResponse(_message.Message):
    __slots__ = ("process",)
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    process: _session_pb2.ProcessInfo
    def __init__(self, process: _Optional[_Union[_session_pb2.ProcessInfo, _Mapping]] = ...) -> None: ...

class SignalProcessRequest(_message.Message):
    __slots__ = ("target", "process_id", "signal")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    process_id: str
    signal: str
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., process_id: _Optional[str] = ..., signal: _Optional[str] = ...) -> None: ...

class SignalProcessResponse(_message.Message):
    __slots__ = ("process",)
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    process: _session_pb2.ProcessInfo
    def __init__(self, process: _Optional[_Union[_session_pb2.ProcessInfo, _Mapping]] = ...) -> None: ...

class WaitProcessRequest(_message.Message):
    __slots__ = ("target", "process_id", "timeout_ms")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    process_id: str
    timeout_ms: int
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., process_id: _Optional[str] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class WaitProcessResponse(_message.Message):
    __slots__ = ("process",)
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    process: _session_pb2.ProcessInfo
    def __init__(self, process: _Optional[_Union[_session_pb2.ProcessInfo, _Mapping]] = ...) -> None: ...

class ListProcessesRequest(_message.Message):
    __slots__ = ("target",)
    TARGET_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ...) -> None: ...

class ListProcessesResponse(_message.Message):
    __slots__ = ("processes",)
    PROCESSES_FIELD_NUMBER: _ClassVar[int]
    processes: _containers.RepeatedCompositeFieldContainer[_session_pb2.ProcessInfo]
    def __init__(self, processes: _Optional[_Iterable[_Union[_session_pb2.ProcessInfo, _Mapping]]] = ...) -> None: ...

class ReadFileRequest(_message.Message):
    __slots__ = ("target", "path", "offset", "length")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    path: str
    offset: int
    length: int
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., path: _Optional[str] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ...) -> None: ...

class ReadFileResponse(_message.Message):
    __slots__ = ("info", "data")
    INFO_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    info: _session_pb2.FileInfo
    data: bytes
    def __init__(self, info: _Optional[_Union[_session_pb2.FileInfo, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class WriteFileRequest(_message.Message):
    __slots__ = ("target", "path", "upload_id", "offset", "data", "mode", "file_mode", "last", "parents")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    UPLOAD_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    FILE_MODE_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    PARENTS_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    path: str
    upload_id: str
    offset: int
    data: bytes
    mode: _session_pb2.WriteMode
    file_mode: int
    last: bool
    parents: bool
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., path: _Optional[str] = ..., upload_id: _Optional[str] = ..., offset: _Optional[int] = ..., data: _Optional[bytes] = ..., mode: _Optional[_Union[_session_pb2.WriteMode, str]] = ..., file_mode: _Optional[int] = ..., last: _Optional[bool] = ..., parents: _Optional[bool] = ...) -> None: ...

class WriteFileResponse(_message.Message):
    __slots__ = ("received", "info")
    RECEIVED_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    received: int
    info: _session_pb2.FileInfo
    def __init__(self, received: _Optional[int] = ..., info: _Optional[_Union[_session_pb2.FileInfo, _Mapping]] = ...) -> None: ...

class StatRequest(_message.Message):
    __slots__ = ("target", "path")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    path: str
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., path: _Optional[str] = ...) -> None: ...

class StatResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: _session_pb2.FileInfo
    def __init__(self, info: _Optional[_Union[_session_pb2.FileInfo, _Mapping]] = ...) -> None: ...

class MakeDirRequest(_message.Message):
    __slots__ = ("target", "path", "parents", "mode")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    PARENTS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    path: str
    parents: bool
    mode: int
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., path: _Optional[str] = ..., parents: _Optional[bool] = ..., mode: _Optional[int] = ...) -> None: ...

class MakeDirResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: _session_pb2.FileInfo
    def __init__(self, info: _Optional[_Union[_session_pb2.FileInfo, _Mapping]] = ...) -> None: ...

class RemoveRequest(_message.Message):
    __slots__ = ("target", "path", "recursive")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    path: str
    recursive: bool
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., path: _Optional[str] = ..., recursive: _Optional[bool] = ...) -> None: ...

class RemoveResponse(_message.Message):
    __slots__ = ("removed",)
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    removed: bool
    def __init__(self, removed: _Optional[bool] = ...) -> None: ...

class RenameRequest(_message.Message):
    __slots__ = ("target", "to", "overwrite")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    OVERWRITE_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    to: str
    overwrite: bool
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., to: _Optional[str] = ..., overwrite: _Optional[bool] = ..., **kwargs) -> None: ...

class RenameResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: _session_pb2.FileInfo
    def __init__(self, info: _Optional[_Union[_session_pb2.FileInfo, _Mapping]] = ...) -> None: ...

class ListFilesRequest(_message.Message):
    __slots__ = ("target", "path", "limit", "page_token")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    target: SessionTarget
    path: str
    limit: int
    page_token: str
    def __init__(self, target: _Optional[_Union[SessionTarget, _Mapping]] = ..., path: _Optional[str] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListFilesResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_session_pb2.FileInfo]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[_session_pb2.FileInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
