/**
 * `Run.status`: written by the controller (scheduling, recovery) and by runtimed on the assigned
 * pod (execution, results). Writes from a pod are fenced on `assignment.podUID` + `attempt`.
 */
import type { Static } from "@sinclair/typebox";
import { Limits } from "./constants.ts";
import { ArtifactDriver, REASONS, RUN_PHASES, WAITING_REASONS } from "./reasons.ts";
import { Conditions, ObjectName, ObservedGeneration } from "./schema/common.ts";
import {
  Bool,
  cel,
  celString,
  Int32,
  Int64,
  List,
  MapOf,
  Obj,
  Str,
  StringEnum,
  Type,
} from "./schema/kube.ts";

function Micros(description: string) {
  return Int64({ description: `${description} Microseconds since the Unix epoch.`, minimum: 0 });
}

export const AssignmentSchema = Obj(
  {
    pod: ObjectName("Name of the Runtime Pod the attempt is bound to."),
    podUID: Str(64, {
      description: "UID of that pod; with `attempt`, the fence for every write from the pod.",
    }),
    attempt: Int32({
      description: "The attempt this assignment is for.",
      minimum: 1,
      maximum: Limits.maxAttempts,
    }),
    node: Type.Optional(Str(253, { description: "Node the pod runs on." })),
  },
  { description: "Where the current attempt runs. Set by the scheduler with phase Scheduled." },
);

export const EndpointSchema = Obj(
  {
    pod: ObjectName("Name of the pod serving the Run."),
    podUID: Str(64, { description: "UID of that pod: the gateway's route is fenced on it." }),
    attempt: Int32({
      description: "The attempt (registration) serving; a call for another attempt is refused as stale.",
      minimum: 1,
      maximum: Limits.maxAttempts,
    }),
    address: Type.Optional(
      Str(64, {
        description:
          "`host:port` of runtimed's dataplane on that pod, as runtimed knows it. The gateway prefers the pod's EndpointSlice entry and uses this when the slice has none (e.g. loopback pod IPs, which EndpointSlices cannot hold).",
      }),
    ),
    readyMicros: Type.Optional(Micros("When the Run became Ready on this pod.")),
  },
  {
    description:
      "For functions and sessions: where the Run is served while Ready. The gateway routes calls to this pod's runtimed and fences them on pod UID and attempt; it changes when the Run is re-placed.",
  },
);

export const TimingSchema = Obj(
  {
    createdMicros: Type.Optional(
      Micros(
        "When the client created the Run (from the `kruntimes.io/created-micros` annotation, if it set one).",
      ),
    ),
    scheduledMicros: Type.Optional(Micros("When the scheduler bound the current attempt to a pod.")),
    startedMicros: Type.Optional(Micros("When the Runtime Server started the current attempt.")),
    finishedMicros: Type.Optional(Micros("When the current attempt's process exited (or the Run ended).")),
    reportedMicros: Type.Optional(Micros("When runtimed wrote the terminal status.")),
  },
  {
    description:
      "Microsecond timestamps of the current attempt, for latency breakdowns (`metav1.Time` has one-second precision).",
  },
);

export const ArtifactRefSchema = Obj(
  {
    name: Str(253, {
      description: "Artifact name, unique within the Run.",
      minLength: 1,
      pattern: "^[A-Za-z0-9._-][A-Za-z0-9._/-]*$",
    }),
    driver: StringEnum([ArtifactDriver.S3, ArtifactDriver.Filesystem] as const, {
      description: "Which store of the Runtime's `spec.artifactStore` holds it.",
    }),
    type: StringEnum(["file", "archive", "log"] as const, {
      description:
        "`file` (one file), `archive` (a directory, as tar) or `log` (a full stdout/stderr stream).",
    }),
    location: Str(Limits.urlLength, {
      description: "Where it is: `s3://bucket/key`, or a path inside the filesystem store's claim.",
      minLength: 1,
    }),
    attempt: Type.Optional(
      Int32({ description: "The attempt that produced it.", minimum: 1, maximum: Limits.maxAttempts }),
    ),
    size: Type.Optional(Int64({ description: "Size in bytes.", minimum: 0 })),
    digest: Type.Optional(
      Str(71, { description: "Content digest, `sha256:<64 hex digits>`.", pattern: "^sha256:[a-f0-9]{64}$" }),
    ),
    contentType: Type.Optional(Str(255, { description: "MIME type." })),
    created: Type.Optional(Str(64, { description: "When it was stored (RFC 3339).", format: "date-time" })),
  },
  { description: "A reference to an artifact a Run stored." },
);

const OUTPUT_NAME_PATTERN = "^[A-Za-z_][A-Za-z0-9_.-]*$";

export const RunStatusSchema = Obj(
  {
    observedGeneration: Type.Optional(ObservedGeneration()),
    phase: Type.Optional(StringEnum(RUN_PHASES, { description: "Where the Run is in its lifecycle." })),
    reason: Type.Optional(
      StringEnum(REASONS, { description: "Why the Run is in its phase (a closed set)." }),
    ),
    message: Type.Optional(Str(Limits.messageLength, { description: "Human-readable details of `reason`." })),
    waitingReason: Type.Optional(
      StringEnum(WAITING_REASONS, { description: "While Pending: why no pod has been assigned yet." }),
    ),
    attempt: Type.Optional(
      Int32({
        description: "Number of the current (or last) attempt, from 1; 0 before the first.",
        minimum: 0,
        maximum: Limits.maxAttempts,
      }),
    ),
    assignment: Type.Optional(AssignmentSchema),
    exitCode: Type.Optional(
      Int32({ description: "Exit code of the task's process, when it exited.", minimum: 0, maximum: 255 }),
    ),
    signal: Type.Optional(
      Str(16, {
        description: "Signal that ended the task's process, e.g. `SIGKILL`.",
        pattern: "^SIG[A-Z0-9]+$",
      }),
    ),
    outputs: Type.Optional(
      MapOf(Str(Limits.outputValueLength, { description: "Output value." }), Limits.outputCount, {
        description: "Named results the task reported (bounded key/values).",
        "x-kubernetes-validations": [
          cel(
            `self.all(k, size(k) <= ${Limits.outputNameLength} && k.matches(${celString(OUTPUT_NAME_PATTERN)}))`,
            `output names are letters, digits, '_', '.' and '-', not starting with a digit, at most ${Limits.outputNameLength} characters`,
          ),
        ],
      }),
    ),
    stdoutTail: Type.Optional(
      Str(Limits.tailLength, { description: "Last characters of the task's stdout." }),
    ),
    stderrTail: Type.Optional(
      Str(Limits.tailLength, { description: "Last characters of the task's stderr." }),
    ),
    stdoutTruncated: Type.Optional(
      Bool({ description: "`stdoutTail` holds only the end of a longer stdout." }),
    ),
    stderrTruncated: Type.Optional(
      Bool({ description: "`stderrTail` holds only the end of a longer stderr." }),
    ),
    artifactRefs: Type.Optional(
      List(ArtifactRefSchema, Limits.artifactCount, {
        description: "Artifacts the Run stored, in the Runtime's artifact store.",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      }),
    ),
    endpoint: Type.Optional(EndpointSchema),
    timing: Type.Optional(TimingSchema),
    conditions: Type.Optional(Conditions("`Scheduled`; for functions also `Registered` and `Ready`.")),
  },
  {
    description: "Observed state of the Run, written by the controller and by runtimed on the assigned pod.",
  },
);

export type RunStatus = Static<typeof RunStatusSchema>;
export type RunAssignment = Static<typeof AssignmentSchema>;
export type RunTiming = Static<typeof TimingSchema>;
export type RunEndpoint = Static<typeof EndpointSchema>;
export type ArtifactRef = Static<typeof ArtifactRefSchema>;
