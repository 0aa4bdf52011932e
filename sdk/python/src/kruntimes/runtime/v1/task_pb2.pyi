from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class OutputStream(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTPUT_STREAM_UNSPECIFIED: _ClassVar[OutputStream]
    OUTPUT_STREAM_STDOUT: _ClassVar[OutputStream]
    OUTPUT_STREAM_STDERR: _ClassVar[OutputStream]

class TaskExitReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_EXIT_REASON_UNSPECIFIED: _ClassVar[TaskExitReason]
    TASK_EXIT_REASON_COMPLETED: _ClassVar[TaskExitReason]
    TASK_EXIT_REASON_TIMEOUT: _ClassVar[TaskExitReason]
    TASK_EXIT_REASON_CANCELLED: _ClassVar[TaskExitReason]
    TASK_EXIT_REASON_OUTPUTS_INVALID: _ClassVar[TaskExitReason]
    TASK_EXIT_REASON_START_FAILED: _ClassVar[TaskExitReason]
    TASK_EXIT_REASON_INTERNAL: _ClassVar[TaskExitReason]

class TaskState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_STATE_UNSPECIFIED: _ClassVar[TaskState]
    TASK_STATE_RUNNING: _ClassVar[TaskState]
    TASK_STATE_STOPPING: _ClassVar[TaskState]
    TASK_STATE_EXITED: _ClassVar[TaskState]
OUTPUT_STREAM_UNSPECIFIED: OutputStream
OUTPUT_STREAM_STDOUT: OutputStream
OUTPUT_STREAM_STDERR: OutputStream
TASK_EXIT_REASON_UNSPECIFIED: TaskExitReason
TASK_EXIT_REASON_COMPLETED: TaskExitReason
TASK_EXIT_REASON_TIMEOUT: TaskExitReason
TASK_EXIT_REASON_CANCELLED: TaskExitReason
TASK_EXIT_REASON_OUTPUTS_INVALID: TaskExitReason
TASK_EXIT_REASON_START_FAILED: TaskExitReason
TASK_EXIT_REASON_INTERNAL: TaskExitReason
TASK_STATE_UNSPECIFIED: TaskState
TASK_STATE_RUNNING: TaskState
TASK_STATE_STOPPING: TaskState
TASK_STATE_EXITED: TaskState

class ExecuteRequest(_message.Message):
    __slots__ = ("run_uid", "run_name", "attempt", "inline", "entrypoint", "args", "env", "timeout_ms", "termination_grace_ms", "limits", "working_dir")
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
    INLINE_FIELD_NUMBER: _ClassVar[int]
    ENTRYPOINT_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIR_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    run_name: str
    attempt: int
    inline: str
    entrypoint: str
    args: _containers.RepeatedScalarFieldContainer[str]
    env: _containers.ScalarMap[str, str]
    timeout_ms: int
    termination_grace_ms: int
    limits: TaskLimits
    working_dir: str
    def __init__(self, run_uid: _Optional[str] = ..., run_name: _Optional[str] = ..., attempt: _Optional[int] = ..., inline: _Optional[str] = ..., entrypoint: _Optional[str] = ..., args: _Optional[_Iterable[str]] = ..., env: _Optional[_Mapping[str, str]] = ..., timeout_ms: _Optional[int] = ..., termination_grace_ms: _Optional[int] = ..., limits: _Optional[_Union[TaskLimits, _Mapping]] = ..., working_dir: _Optional[str] = ...) -> None: ...

class TaskLimits(_message.Message):
    __slots__ = ("tail_bytes", "outputs_max_count", "outputs_max_bytes", "output_value_max_bytes")
    TAIL_BYTES_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_MAX_COUNT_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_VALUE_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    tail_bytes: int
    outputs_max_count: int
    outputs_max_bytes: int
    output_value_max_bytes: int
    def __init__(self, tail_bytes: _Optional[int] = ..., outputs_max_count: _Optional[int] = ..., outputs_max_bytes: _Optional[int] = ..., output_value_max_bytes: _Optional[int] = ...) -> None: ...

class ExecuteResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: TaskEvent
    def __init__(self, event: _Optional[_Union[TaskEvent, _Mapping]] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("run_uid", "attempt", "replay_tails")
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    REPLAY_TAILS_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    attempt: int
    replay_tails: bool
    def __init__(self, run_uid: _Optional[str] = ..., attempt: _Optional[int] = ..., replay_tails: _Optional[bool] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: TaskEvent
    def __init__(self, event: _Optional[_Union[TaskEvent, _Mapping]] = ...) -> None: ...

class TaskEvent(_message.Message):
    __slots__ = ("started", "output", "exited")
    STARTED_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    EXITED_FIELD_NUMBER: _ClassVar[int]
    started: TaskStarted
    output: TaskOutput
    exited: TaskExited
    def __init__(self, started: _Optional[_Union[TaskStarted, _Mapping]] = ..., output: _Optional[_Union[TaskOutput, _Mapping]] = ..., exited: _Optional[_Union[TaskExited, _Mapping]] = ...) -> None: ...

class TaskStarted(_message.Message):
    __slots__ = ("run_uid", "attempt", "pid", "started_at_micros", "warm", "working_dir")
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_MICROS_FIELD_NUMBER: _ClassVar[int]
    WARM_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIR_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    attempt: int
    pid: int
    started_at_micros: int
    warm: bool
    working_dir: str
    def __init__(self, run_uid: _Optional[str] = ..., attempt: _Optional[int] = ..., pid: _Optional[int] = ..., started_at_micros: _Optional[int] = ..., warm: _Optional[bool] = ..., working_dir: _Optional[str] = ...) -> None: ...

class TaskOutput(_message.Message):
    __slots__ = ("stream", "data", "offset")
    STREAM_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    stream: OutputStream
    data: bytes
    offset: int
    def __init__(self, stream: _Optional[_Union[OutputStream, str]] = ..., data: _Optional[bytes] = ..., offset: _Optional[int] = ...) -> None: ...

class TaskExited(_message.Message):
    __slots__ = ("run_uid", "attempt", "reason", "message", "exit_code", "signal", "stdout_tail", "stderr_tail", "stdout_truncated", "stderr_truncated", "stdout_bytes", "stderr_bytes", "outputs", "started_at_micros", "finished_at_micros")
    class OutputsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    STDOUT_TAIL_FIELD_NUMBER: _ClassVar[int]
    STDERR_TAIL_FIELD_NUMBER: _ClassVar[int]
    STDOUT_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    STDERR_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    STDOUT_BYTES_FIELD_NUMBER: _ClassVar[int]
    STDERR_BYTES_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_MICROS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_MICROS_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    attempt: int
    reason: TaskExitReason
    message: str
    exit_code: int
    signal: str
    stdout_tail: bytes
    stderr_tail: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    stdout_bytes: int
    stderr_bytes: int
    outputs: _containers.ScalarMap[str, str]
    started_at_micros: int
    finished_at_micros: int
    def __init__(self, run_uid: _Optional[str] = ..., attempt: _Optional[int] = ..., reason: _Optional[_Union[TaskExitReason, str]] = ..., message: _Optional[str] = ..., exit_code: _Optional[int] = ..., signal: _Optional[str] = ..., stdout_tail: _Optional[bytes] = ..., stderr_tail: _Optional[bytes] = ..., stdout_truncated: _Optional[bool] = ..., stderr_truncated: _Optional[bool] = ..., stdout_bytes: _Optional[int] = ..., stderr_bytes: _Optional[int] = ..., outputs: _Optional[_Mapping[str, str]] = ..., started_at_micros: _Optional[int] = ..., finished_at_micros: _Optional[int] = ...) -> None: ...

class ListRequest(_message.Message):
    __slots__ = ("run_uid",)
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    def __init__(self, run_uid: _Optional[str] = ...) -> None: ...

class ListResponse(_message.Message):
    __slots__ = ("executions",)
    EXECUTIONS_FIELD_NUMBER: _ClassVar[int]
    executions: _containers.RepeatedCompositeFieldContainer[TaskExecution]
    def __init__(self, executions: _Optional[_Iterable[_Union[TaskExecution, _Mapping]]] = ...) -> None: ...

class TaskExecution(_message.Message):
    __slots__ = ("run_uid", "attempt", "run_name", "state", "pid", "started_at_micros", "finished_at_micros", "reason")
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    RUN_NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_MICROS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_MICROS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    attempt: int
    run_name: str
    state: TaskState
    pid: int
    started_at_micros: int
    finished_at_micros: int
    reason: TaskExitReason
    def __init__(self, run_uid: _Optional[str] = ..., attempt: _Optional[int] = ..., run_name: _Optional[str] = ..., state: _Optional[_Union[TaskState, str]] = ..., pid: _Optional[int] = ..., started_at_micros: _Optional[int] = ..., finished_at_micros: _Optional[int] = ..., reason: _Optional[_Union[TaskExitReason, str]] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ("run_uid", "attempt", "grace_ms", "force")
    RUN_UID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    run_uid: str
    attempt: int
    grace_ms: int
    force: bool
    def __init__(self, run_uid: _Optional[str] = ..., attempt: _Optional[int] = ..., grace_ms: _Optional[int] = ..., force: _Optional[bool] = ...) -> None: ...

class CancelResponse(_message.Message):
    __slots__ = ("state",)
    STATE_FIELD_NUMBER: _ClassVar[int]
    state: TaskState
    def __init__(self, state: _Optional[_Union[TaskState, str]] = ...) -> None: ...
