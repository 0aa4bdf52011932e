/**
 * `PersistentWorkspace`: a directory that outlives the Runs using it. Bound (metadata only, no
 * capacity reserved) to one Runtime pod, chosen by a stable hash of the workspace's UID among
 * that Runtime's ready pods; every Run naming it (`Run.spec.workspace`) is placed on that pod and
 * works in that directory. The pod gone, or a new pod under the same name (another UID), and the
 * workspace is `Lost` for good: the binding is fenced on `boundPodUID`.
 */
import type { Static } from "@sinclair/typebox";
import { type API_VERSION, Limits, type WORKSPACE_KIND, WORKSPACE_MOUNT_PATH } from "./constants.ts";
import { Conditions, ObservedGeneration } from "./schema/common.ts";
import { cel, Int32, Int64, Obj, Str, StringEnum, Type } from "./schema/kube.ts";
import type { ObjectMeta } from "./schema/meta.ts";

export const WorkspaceBinding = { RuntimePodLocal: "RuntimePodLocal" } as const;
export const ReclaimPolicy = { Delete: "Delete", Retain: "Retain" } as const;
export const WorkspacePhase = {
  Pending: "Pending",
  Bound: "Bound",
  Released: "Released",
  Lost: "Lost",
} as const;
export type WorkspacePhase = (typeof WorkspacePhase)[keyof typeof WorkspacePhase];

/** On a PersistentWorkspace until runtimed on the bound pod removed its directory (or it never had one). */
export const WORKSPACE_FINALIZER = "kruntimes.io/workspace";

/**
 * The workspace's directory, relative to the Runtime Server's workspace root (`/workspace/runs`,
 * where every Run's working directory lives): the name for people, the UID's first 8 characters
 * so a new workspace reusing the name never finds an old one's (retained) files.
 */
export function workspaceDirectory(name: string, uid: string): string {
  return `workspaces/${name}-${uid.slice(0, 8)}`;
}

/** The same directory as an absolute path in the runtime container (`status.path`). */
export function workspacePath(name: string, uid: string): string {
  return `${WORKSPACE_MOUNT_PATH}/runs/${workspaceDirectory(name, uid)}`;
}

export const PersistentWorkspaceSpecSchema = Obj(
  {
    runtime: Type.Optional(
      Str(63, {
        description:
          "The Runtime whose pod holds the directory, in the workspace's namespace. Unset: the Runtime of the first Run that uses it (recorded in status.runtime). Runs using the workspace must name the same Runtime.",
        minLength: 1,
        pattern: "^[a-z]([-a-z0-9]*[a-z0-9])?$",
        "x-kubernetes-validations": [
          cel("self == oldSelf", "spec.runtime is immutable: the directory lives on its pods"),
        ],
      }),
    ),
    binding: Type.Optional(
      StringEnum([WorkspaceBinding.RuntimePodLocal] as const, {
        description:
          "`RuntimePodLocal` (the default): a directory on one Runtime pod's workspace volume. Its data lives as long as that pod (or the volume, when the Runtime's `spec.workspace` is a PVC).",
        default: WorkspaceBinding.RuntimePodLocal,
        "x-kubernetes-validations": [cel("self == oldSelf", "spec.binding is immutable")],
      }),
    ),
    reclaimPolicy: Type.Optional(
      StringEnum([ReclaimPolicy.Delete, ReclaimPolicy.Retain] as const, {
        description:
          "What happens to the directory when the workspace is deleted: `Delete` (the default) removes it, `Retain` leaves it on the volume.",
        default: ReclaimPolicy.Delete,
      }),
    ),
    ttlSecondsAfterUnused: Type.Optional(
      Int32({
        description:
          "Delete the workspace this many seconds after its last Run ended (none active). Unset: keep it until deleted.",
        minimum: 0,
        maximum: Limits.ttlSeconds,
      }),
    ),
    released: Type.Optional(
      Type.Boolean({
        description:
          "Set true to stop new Runs from using the workspace (they stay Pending with a clear message); Runs already using it finish. Cannot be unset.",
        "x-kubernetes-validations": [cel("self || !oldSelf", "spec.released cannot be unset once true")],
      }),
    ),
  },
  {
    description: "Desired state of the PersistentWorkspace.",
    "x-kubernetes-validations": [
      cel("!has(oldSelf.runtime) || has(self.runtime)", "spec.runtime cannot be removed once set", {
        fieldPath: ".runtime",
      }),
      cel("!has(oldSelf.released) || has(self.released)", "spec.released cannot be removed once set", {
        fieldPath: ".released",
      }),
    ],
  },
);

export const PersistentWorkspaceStatusSchema = Obj(
  {
    observedGeneration: Type.Optional(ObservedGeneration()),
    phase: Type.Optional(
      StringEnum(Object.values(WorkspacePhase) as [WorkspacePhase, ...WorkspacePhase[]], {
        description:
          "`Pending` (no ready pod to bind yet), `Bound` (to `boundPod`), `Released` (spec.released: no new Runs), `Lost` (the bound pod is gone or was replaced; permanent).",
      }),
    ),
    runtime: Type.Optional(
      Str(63, { description: "The Runtime it is bound to (spec.runtime, or the first Run's)." }),
    ),
    boundPod: Type.Optional(Str(253, { description: "The Runtime pod holding the directory." })),
    boundPodUID: Type.Optional(
      Str(36, {
        description: "UID of that pod: a re-created pod of the same name does not inherit the workspace.",
      }),
    ),
    path: Type.Optional(Str(4096, { description: "The directory inside the runtime container." })),
    activeRuns: Type.Optional(
      Int32({ description: "Runs using the workspace that have not ended.", minimum: 0, maximum: 1_000_000 }),
    ),
    lastUsedMicros: Type.Optional(
      Int64({
        description: "When the last Run using it ended (Unix microseconds); the TTL counts from here.",
        minimum: 0,
      }),
    ),
    message: Type.Optional(Str(Limits.messageLength, { description: "Why it is in its phase, for people." })),
    conditions: Type.Optional(Conditions("`Bound`.")),
  },
  { description: "Observed state of the PersistentWorkspace, written by the controller." },
);

export type PersistentWorkspaceSpec = Static<typeof PersistentWorkspaceSpecSchema>;
export type PersistentWorkspaceStatus = Static<typeof PersistentWorkspaceStatusSchema>;

export interface PersistentWorkspace {
  apiVersion: typeof API_VERSION;
  kind: typeof WORKSPACE_KIND;
  metadata: ObjectMeta;
  spec: PersistentWorkspaceSpec;
  status?: PersistentWorkspaceStatus;
}
