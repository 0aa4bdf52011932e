from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ServingStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SERVING_STATUS_UNSPECIFIED: _ClassVar[ServingStatus]
    SERVING_STATUS_SERVING: _ClassVar[ServingStatus]
    SERVING_STATUS_DRAINING: _ClassVar[ServingStatus]

class Mode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MODE_UNSPECIFIED: _ClassVar[Mode]
    MODE_TASK: _ClassVar[Mode]
    MODE_FUNCTION: _ClassVar[Mode]
    MODE_SESSION: _ClassVar[Mode]

class TaskInput(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_INPUT_UNSPECIFIED: _ClassVar[TaskInput]
    TASK_INPUT_INLINE: _ClassVar[TaskInput]
    TASK_INPUT_ENTRYPOINT: _ClassVar[TaskInput]
    TASK_INPUT_COMMANDS: _ClassVar[TaskInput]
SERVING_STATUS_UNSPECIFIED: ServingStatus
SERVING_STATUS_SERVING: ServingStatus
SERVING_STATUS_DRAINING: ServingStatus
MODE_UNSPECIFIED: Mode
MODE_TASK: Mode
MODE_FUNCTION: Mode
MODE_SESSION: Mode
TASK_INPUT_UNSPECIFIED: TaskInput
TASK_INPUT_INLINE: TaskInput
TASK_INPUT_ENTRYPOINT: TaskInput
TASK_INPUT_COMMANDS: TaskInput

class RemoveDirectoryRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class RemoveDirectoryResponse(_message.Message):
    __slots__ = ("existed",)
    EXISTED_FIELD_NUMBER: _ClassVar[int]
    existed: bool
    def __init__(self, existed: _Optional[bool] = ...) -> None: ...

class HealthRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HealthResponse(_message.Message):
    __slots__ = ("status", "running", "warm_ready", "now_micros")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    WARM_READY_FIELD_NUMBER: _ClassVar[int]
    NOW_MICROS_FIELD_NUMBER: _ClassVar[int]
    status: ServingStatus
    running: int
    warm_ready: int
    now_micros: int
    def __init__(self, status: _Optional[_Union[ServingStatus, str]] = ..., running: _Optional[int] = ..., warm_ready: _Optional[int] = ..., now_micros: _Optional[int] = ...) -> None: ...

class InfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class InfoResponse(_message.Message):
    __slots__ = ("server_version", "language", "interpreter", "interpreter_version", "modes", "task_inputs", "limits", "max_concurrent", "warm_pool_size", "workspace_root", "default_grace_ms", "retain_finished_ms", "runtime_name")
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    INTERPRETER_FIELD_NUMBER: _ClassVar[int]
    INTERPRETER_VERSION_FIELD_NUMBER: _ClassVar[int]
    MODES_FIELD_NUMBER: _ClassVar[int]
    TASK_INPUTS_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_FIELD_NUMBER: _ClassVar[int]
    WARM_POOL_SIZE_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ROOT_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    RETAIN_FINISHED_MS_FIELD_NUMBER: _ClassVar[int]
    RUNTIME_NAME_FIELD_NUMBER: _ClassVar[int]
    server_version: str
    language: str
    interpreter: str
    interpreter_version: str
    modes: _containers.RepeatedScalarFieldContainer[Mode]
    task_inputs: _containers.RepeatedScalarFieldContainer[TaskInput]
    limits: TaskLimitsInfo
    max_concurrent: int
    warm_pool_size: int
    workspace_root: str
    default_grace_ms: int
    retain_finished_ms: int
    runtime_name: str
    def __init__(self, server_version: _Optional[str] = ..., language: _Optional[str] = ..., interpreter: _Optional[str] = ..., interpreter_version: _Optional[str] = ..., modes: _Optional[_Iterable[_Union[Mode, str]]] = ..., task_inputs: _Optional[_Iterable[_Union[TaskInput, str]]] = ..., limits: _Optional[_Union[TaskLimitsInfo, _Mapping]] = ..., max_concurrent: _Optional[int] = ..., warm_pool_size: _Optional[int] = ..., workspace_root: _Optional[str] = ..., default_grace_ms: _Optional[int] = ..., retain_finished_ms: _Optional[int] = ..., runtime_name: _Optional[str] = ...) -> None: ...

class TaskLimitsInfo(_message.Message):
    __slots__ = ("default_tail_bytes", "max_tail_bytes", "default_outputs_max_count", "max_outputs_max_count", "default_outputs_max_bytes", "max_outputs_max_bytes", "default_output_value_max_bytes", "max_output_value_max_bytes")
    DEFAULT_TAIL_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_TAIL_BYTES_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_OUTPUTS_MAX_COUNT_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUTS_MAX_COUNT_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_OUTPUTS_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUTS_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_OUTPUT_VALUE_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_VALUE_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    default_tail_bytes: int
    max_tail_bytes: int
    default_outputs_max_count: int
    max_outputs_max_count: int
    default_outputs_max_bytes: int
    max_outputs_max_bytes: int
    default_output_value_max_bytes: int
    max_output_value_max_bytes: int
    def __init__(self, default_tail_bytes: _Optional[int] = ..., max_tail_bytes: _Optional[int] = ..., default_outputs_max_count: _Optional[int] = ..., max_outputs_max_count: _Optional[int] = ..., default_outputs_max_bytes: _Optional[int] = ..., max_outputs_max_bytes: _Optional[int] = ..., default_output_value_max_bytes: _Optional[int] = ..., max_output_value_max_bytes: _Optional[int] = ...) -> None: ...
