/** What plugins see: the Run being placed, the candidate pods and their Runtime. */
import type { Affinity } from "@kruntimes/api";

/** A Run's logical resource request, flattened for the hot path. */
export interface RunRequest {
  readonly key: string;
  readonly runtimeKey: string;
  /** Resource names and amounts, same order; `runs` is always present (default 1). */
  readonly names: readonly string[];
  readonly amounts: readonly number[];
  /** A session: it takes the pod's whole capacity, so only an empty, never-used pod fits. */
  readonly exclusive?: boolean;
  readonly namespace: string;
  /** The Run's labels, which other Runs' affinity terms select. */
  readonly labels: Readonly<Record<string, string>>;
  /** `spec.priority` (default 0): the queue's order. */
  readonly priority: number;
  /** `spec.affinity`, as written (the run-affinity plugins compile it). */
  readonly affinity?: Affinity;
  /** `spec.workspace.name`: the PersistentWorkspace whose bound pod the Run must go to. */
  readonly workspace?: string;
}

/** Why a pod does not accept Runs right now; undefined when it does. */
export type Unavailability =
  | "NotReady"
  | "Terminating"
  | "Draining"
  | "NoHeartbeat"
  | "HeartbeatStale"
  | "HeartbeatNotOwned"
  | "NoCapacity";

/** A Runtime Pod as the scheduler tracks it. */
export interface PodView {
  readonly key: string;
  readonly name: string;
  readonly uid: string;
  /** `<namespace>/<pod>@<uid>` (Run affinity's topology domain); derived from key and uid when absent. */
  readonly domain?: string;
  readonly node: string;
  /** Capacity from the pod's `kruntimes.io/capacity` annotation. */
  readonly capacity: Readonly<Record<string, number>>;
  /** Sum of the requests of Runs held on this pod (confirmed and assumed). */
  readonly used: Readonly<Record<string, number>>;
  /** Some Run holds capacity here (confirmed or assumed). */
  readonly occupied?: boolean;
  /** A session holds or held this pod incarnation: no Run is placed here again. */
  readonly sealed?: boolean;
  unavailability(nowMs: number): Unavailability | undefined;
}

export interface RuntimeView {
  readonly key: string;
  /** `spec.capacity` with defaults applied: what each pod of the current template offers. */
  readonly capacity: Readonly<Record<string, number>>;
}
