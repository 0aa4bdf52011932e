from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SessionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_STATE_UNSPECIFIED: _ClassVar[SessionState]
    SESSION_STATE_OPEN: _ClassVar[SessionState]
    SESSION_STATE_DRAINING: _ClassVar[SessionState]
    SESSION_STATE_CLOSED: _ClassVar[SessionState]

class CloseMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLOSE_MODE_UNSPECIFIED: _ClassVar[CloseMode]
    CLOSE_MODE_DRAIN: _ClassVar[CloseMode]
    CLOSE_MODE_CANCEL: _ClassVar[CloseMode]

class ExitReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXIT_REASON_UNSPECIFIED: _ClassVar[ExitReason]
    EXIT_REASON_EXITED: _ClassVar[ExitReason]
    EXIT_REASON_TIMEOUT: _ClassVar[ExitReason]
    EXIT_REASON_CANCELLED: _ClassVar[ExitReason]
    EXIT_REASON_START_FAILED: _ClassVar[ExitReason]

class FileType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FILE_TYPE_UNSPECIFIED: _ClassVar[FileType]
    FILE_TYPE_FILE: _ClassVar[FileType]
    FILE_TYPE_DIRECTORY: _ClassVar[FileType]
    FILE_TYPE_SYMLINK: _ClassVar[FileType]
    FILE_TYPE_OTHER: _ClassVar[FileType]

class WriteMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WRITE_MODE_UNSPECIFIED: _ClassVar[WriteMode]
    WRITE_MODE_CREATE: _ClassVar[WriteMode]
    WRITE_MODE_TRUNCATE: _ClassVar[WriteMode]
    WRITE_MODE_APPEND: _ClassVar[WriteMode]
SESSION_STATE_UNSPECIFIED: SessionState
SESSION_STATE_OPEN: SessionState
SESSION_STATE_DRAINING: SessionState
SESSION_STATE_CLOSED: SessionState
CLOSE_MODE_UNSPECIFIED: CloseMode
CLOSE_MODE_DRAIN: CloseMode
CLOSE_MODE_CANCEL: CloseMode
EXIT_REASON_UNSPECIFIED: ExitReason
EXIT_REASON_EXITED: ExitReason
EXIT_REASON_TIMEOUT: ExitReason
EXIT_REASON_CANCELLED: ExitReason
EXIT_REASON_START_FAILED: ExitReason
FILE_TYPE_UNSPECIFIED: FileType
FILE_TYPE_FILE: FileType
FILE_TYPE_DIRECTORY: FileType
FILE_TYPE_SYMLINK: FileType
FILE_TYPE_OTHER: FileType
WRITE_MODE_UNSPECIFIED: WriteMode
WRITE_MODE_CREATE: WriteMode
WRITE_MODE_TRUNCATE: WriteMode
WRITE_MODE_APPEND: WriteMode

class SessionRef(_message.Message):
    __slots__ = ("run_uid", "attempt")
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    attempt: int
    def __init__(self, run_uid: _Optional[str] = ..., attempt: _Optional[int] = ...) -> None: ...

class OpenRequest(_message.Message):
    __slots__ = ("session", "run_name", "env", "workspace_dir")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_FIELD_NUMBER: _ClassVar[int]
    RUN_NAME_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_DIR_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    run_name: str
    env: _containers.ScalarMap[str, str]
    workspace_dir: str
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., run_name: _Optional[str] = ..., env: _Optional[_Mapping[str, str]] = ..., workspace_dir: _Optional[str] = ...) -> None: ...

class SessionInfo(_message.Message):
    __slots__ = ("session", "run_name", "state", "workspace", "running_operations", "running_processes", "opened_micros", "closed_micros")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    RUN_NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    RUNNING_OPERATIONS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_PROCESSES_FIELD_NUMBER: _ClassVar[int]
    OPENED_MICROS_FIELD_NUMBER: _ClassVar[int]
    CLOSED_MICROS_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    run_name: str
    state: SessionState
    workspace: str
    running_operations: int
    running_processes: int
    opened_micros: int
    closed_micros: int
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., run_name: _Optional[str] = ..., state: _Optional[_Union[SessionState, str]] = ..., workspace: _Optional[str] = ..., running_operations: _Optional[int] = ..., running_processes: _Optional[int] = ..., opened_micros: _Optional[int] = ..., closed_micros: _Optional[int] = ...) -> None: ...

class OpenResponse(_message.Message):
    __slots__ = ("info", "created")
    INFO_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    info: SessionInfo
    created: bool
    def __init__(self, info: _Optional[_Union[SessionInfo, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class CloseRequest(_message.Message):
    __slots__ = ("session", "mode", "deadline_ms", "remove_workspace")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    REMOVE_WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    mode: CloseMode
    deadline_ms: int
    remove_workspace: bool
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., mode: _Optional[_Union[CloseMode, str]] = ..., deadline_ms: _Optional[int] = ..., remove_workspace: _Optional[bool] = ...) -> None: ...

class CloseResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: SessionInfo
    def __init__(self, info: _Optional[_Union[SessionInfo, _Mapping]] = ...) -> None: ...

class SessionServiceStatusRequest(_message.Message):
    __slots__ = ("run_uid",)
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    def __init__(self, run_uid: _Optional[str] = ...) -> None: ...

class SessionServiceStatusResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: SessionInfo
    def __init__(self, info: _Optional[_Union[SessionInfo, _Mapping]] = ...) -> None: ...

class SessionServiceListRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SessionServiceListResponse(_message.Message):
    __slots__ = ("sessions",)
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionInfo]
    def __init__(self, sessions: _Optional[_Iterable[_Union[SessionInfo, _Mapping]]] = ...) -> None: ...

class Command(_message.Message):
    __slots__ = ("argv", "shell")
    ARGV_FIELD_NUMBER: _ClassVar[int]
    SHELL_FIELD_NUMBER: _ClassVar[int]
    argv: Argv
    shell: str
    def __init__(self, argv: _Optional[_Union[Argv, _Mapping]] = ..., shell: _Optional[str] = ...) -> None: ...

class Argv(_message.Message):
    __slots__ = ("args",)
    ARGS_FIELD_NUMBER: _ClassVar[int]
    args: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, args: _Optional[_Iterable[str]] = ...) -> None: ...

class ExecRequest(_message.Message):
    __slots__ = ("session", "operation_id", "command", "env", "working_dir", "timeout_ms", "stdin")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_FIELD_NUMBER: _ClassVar[int]
    OPERATION_ID_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIR_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    STDIN_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    operation_id: str
    command: Command
    env: _containers.ScalarMap[str, str]
    working_dir: str
    timeout_ms: int
    stdin: bytes
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., operation_id: _Optional[str] = ..., command: _Optional[_Union[Command, _Mapping]] = ..., env: _Optional[_Mapping[str, str]] = ..., working_dir: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., stdin: _Optional[bytes] = ...) -> None: ...

class ExecResponse(_message.Message):
    __slots__ = ("started", "output", "exited")
    STARTED_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    EXITED_FIELD_NUMBER: _ClassVar[int]
    started: ExecStarted
    output: ExecOutput
    exited: ExecExited
    def __init__(self, started: _Optional[_Union[ExecStarted, _Mapping]] = ..., output: _Optional[_Union[ExecOutput, _Mapping]] = ..., exited: _Optional[_Union[ExecExited, _Mapping]] = ...) -> None: ...

class ExecStarted(_message.Message):
    __slots__ = ("pid", "started_micros")
    PID_FIELD_NUMBER: _ClassVar[int]
    STARTED_MICROS_FIELD_NUMBER: _ClassVar[int]
    pid: int
    started_micros: int
    def __init__(self, pid: _Optional[int] = ..., started_micros: _Optional[int] = ...) -> None: ...

class ExecOutput(_message.Message):
    __slots__ = ("stream", "data")
    STREAM_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    stream: str
    data: bytes
    def __init__(self, stream: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class ExecExited(_message.Message):
    __slots__ = ("reason", "exit_code", "signal", "message", "finished_micros")
    REASON_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FINISHED_MICROS_FIELD_NUMBER: _ClassVar[int]
    reason: ExitReason
    exit_code: int
    signal: str
    message: str
    finished_micros: int
    def __init__(self, reason: _Optional[_Union[ExitReason, str]] = ..., exit_code: _Optional[int] = ..., signal: _Optional[str] = ..., message: _Optional[str] = ..., finished_micros: _Optional[int] = ...) -> None: ...

class CancelOperationRequest(_message.Message):
    __slots__ = ("session", "operation_id")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    OPERATION_ID_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    operation_id: str
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., operation_id: _Optional[str] = ...) -> None: ...

class CancelOperationResponse(_message.Message):
    __slots__ = ("cancelled",)
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    cancelled: bool
    def __init__(self, cancelled: _Optional[bool] = ...) -> None: ...

class StartProcessRequest(_message.Message):
    __slots__ = ("session", "process_id", "command", "env", "working_dir")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIR_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    process_id: str
    command: Command
    env: _containers.ScalarMap[str, str]
    working_dir: str
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., process_id: _Optional[str] = ..., command: _Optional[_Union[Command, _Mapping]] = ..., env: _Optional[_Mapping[str, str]] = ..., working_dir: _Optional[str] = ...) -> None: ...

class ProcessInfo(_message.Message):
    __slots__ = ("process_id", "pid", "running", "reason", "exit_code", "signal", "stdout_tail", "stderr_tail", "started_micros", "finished_micros")
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    STDOUT_TAIL_FIELD_NUMBER: _ClassVar[int]
    STDERR_TAIL_FIELD_NUMBER: _ClassVar[int]
    STARTED_MICROS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_MICROS_FIELD_NUMBER: _ClassVar[int]
    process_id: str
    pid: int
    running: bool
    reason: ExitReason
    exit_code: int
    signal: str
    stdout_tail: bytes
    stderr_tail: bytes
    started_micros: int
    finished_micros: int
    def __init__(self, process_id: _Optional[str] = ..., pid: _Optional[int] = ..., running: _Optional[bool] = ..., reason: _Optional[_Union[ExitReason, str]] = ..., exit_code: _Optional[int] = ..., signal: _Optional[str] = ..., stdout_tail: _Optional[bytes] = ..., stderr_tail: _Optional[bytes] = ..., started_micros: _Optional[int] = ..., finished_micros: _Optional[int] = ...) -> None: ...

class StartProcessResponse(_message.Message):
    __slots__ = ("process",)
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    process: ProcessInfo
    def __init__(self, process: _Optional[_Union[ProcessInfo, _Mapping]] = ...) -> None: ...

class SignalProcessRequest(_message.Message):
    __slots__ = ("session", "process_id", "signal")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    process_id: str
    signal: str
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., process_id: _Optional[str] = ..., signal: _Optional[str] = ...) -> None: ...

class SignalProcessResponse(_message.Message):
    __slots__ = ("process",)
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    process: ProcessInfo
    def __init__(self, process: _Optional[_Union[ProcessInfo, _Mapping]] = ...) -> None: ...

class WaitProcessRequest(_message.Message):
    __slots__ = ("session", "process_id", "timeout_ms")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PROCESS_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    process_id: str
    timeout_ms: int
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., process_id: _Optional[str] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class WaitProcessResponse(_message.Message):
    __slots__ = ("process",)
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    process: ProcessInfo
    def __init__(self, process: _Optional[_Union[ProcessInfo, _Mapping]] = ...) -> None: ...

class ListProcessesRequest(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ...) -> None: ...

class ListProcessesResponse(_message.Message):
    __slots__ = ("processes",)
    PROCESSES_FIELD_NUMBER: _ClassVar[int]
    processes: _containers.RepeatedCompositeFieldContainer[ProcessInfo]
    def __init__(self, processes: _Optional[_Iterable[_Union[ProcessInfo, _Mapping]]] = ...) -> None: ...

class FileInfo(_message.Message):
    __slots__ = ("path", "name", "type", "size", "mode", "modified_micros", "link_target")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_MICROS_FIELD_NUMBER: _ClassVar[int]
    LINK_TARGET_FIELD_NUMBER: _ClassVar[int]
    path: str
    name: str
    type: FileType
    size: int
    mode: int
    modified_micros: int
    link_target: str
    def __init__(self, path: _Optional[str] = ..., name: _Optional[str] = ..., type: _Optional[_Union[FileType, str]] = ..., size: _Optional[int] = ..., mode: _Optional[int] = ..., modified_micros: _Optional[int] = ..., link_target: _Optional[str] = ...) -> None: ...

class ReadFileRequest(_message.Message):
    __slots__ = ("session", "path", "offset", "length")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    path: str
    offset: int
    length: int
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., path: _Optional[str] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ...) -> None: ...

class ReadFileResponse(_message.Message):
    __slots__ = ("info", "data")
    INFO_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    info: FileInfo
    data: bytes
    def __init__(self, info: _Optional[_Union[FileInfo, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class WriteFileRequest(_message.Message):
    __slots__ = ("session", "path", "upload_id", "offset", "data", "mode", "file_mode", "last", "parents")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    UPLOAD_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    FILE_MODE_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    PARENTS_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    path: str
    upload_id: str
    offset: int
    data: bytes
    mode: WriteMode
    file_mode: int
    last: bool
    parents: bool
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., path: _Optional[str] = ..., upload_id: _Optional[str] = ..., offset: _Optional[int] = ..., data: _Optional[bytes] = ..., mode: _Optional[_Union[WriteMode, str]] = ..., file_mode: _Optional[int] = ..., last: _Optional[bool] = ..., parents: _Optional[bool] = ...) -> None: ...

class WriteFileResponse(_message.Message):
    __slots__ = ("received", "info")
    RECEIVED_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    received: int
    info: FileInfo
    def __init__(self, received: _Optional[int] = ..., info: _Optional[_Union[FileInfo, _Mapping]] = ...) -> None: ...

class StatRequest(_message.Message):
    __slots__ = ("session", "path")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    path: str
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., path: _Optional[str] = ...) -> None: ...

class StatResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: FileInfo
    def __init__(self, info: _Optional[_Union[FileInfo, _Mapping]] = ...) -> None: ...

class MakeDirRequest(_message.Message):
    __slots__ = ("session", "path", "parents", "mode")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    PARENTS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    path: str
    parents: bool
    mode: int
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., path: _Optional[str] = ..., parents: _Optional[bool] = ..., mode: _Optional[int] = ...) -> None: ...

class MakeDirResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: FileInfo
    def __init__(self, info: _Optional[_Union[FileInfo, _Mapping]] = ...) -> None: ...

class RemoveRequest(_message.Message):
    __slots__ = ("session", "path", "recursive")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    path: str
    recursive: bool
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., path: _Optional[str] = ..., recursive: _Optional[bool] = ...) -> None: ...

class RemoveResponse(_message.Message):
    __slots__ = ("removed",)
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    removed: bool
    def __init__(self, removed: _Optional[bool] = ...) -> None: ...

class RenameRequest(_message.Message):
    __slots__ = ("session", "to", "overwrite")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    OVERWRITE_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    to: str
    overwrite: bool
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., to: _Optional[str] = ..., overwrite: _Optional[bool] = ..., **kwargs) -> None: ...

class RenameResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: FileInfo
    def __init__(self, info: _Optional[_Union[FileInfo, _Mapping]] = ...) -> None: ...

class ListFilesRequest(_message.Message):
    __slots__ = ("session", "path", "limit", "page_token")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session: SessionRef
    path: str
    limit: int
    page_token: str
    def __init__(self, session: _Optional[_Union[SessionRef, _Mapping]] = ..., path: _Optional[str] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListFilesResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[FileInfo]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[FileInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
