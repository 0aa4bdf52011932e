/**
 * PreFilter for Runs naming a PersistentWorkspace (`spec.workspace`): the workspace must exist, be
 * Bound (not Pending, Released, Lost or being deleted) and belong to the Run's Runtime; otherwise
 * the Run waits with `WorkspaceUnavailable` and a message saying which. Then it narrows the cycle
 * to the bound pod — by incarnation (name and UID), so a re-created pod of the same name never
 * qualifies: the other pods are counted as rejected without running any filter. No Filter: a Run
 * without a workspace costs one field check per cycle, not one call per pod.
 *
 * The Run is parked `UnschedulableAndUnresolvable` on a workspace problem; what wakes it is the
 * workspace's own change (controller/scheduler/plugins/workspace/wakeups.ts), not the Runtime's.
 */
import { type PersistentWorkspace, Reason, WorkspacePhase } from "@kruntimes/api";
import { domainOf } from "../../cache/placement-index.ts";
import type { CycleState } from "../../framework/cycle-state.ts";
import type { PreFilterPlugin } from "../../framework/plugin.ts";
import { Code, rejected, type Status, type Verdict } from "../../framework/status.ts";
import type { RunRequest, RuntimeView } from "../../framework/types.ts";

export const NAME = "workspace";

/** PersistentWorkspaces by `namespace/name`: the controller's informer. */
export interface WorkspaceLookup {
  get(key: string): PersistentWorkspace | undefined;
}

const NO_LOOKUP: WorkspaceLookup = { get: () => undefined };

/** The bound pod's incarnation. */
interface Bound {
  readonly pod: string;
  readonly uid: string;
}

/** The one pod incarnation (`PodView.domain`) a workspace Run may go to. */
class OneDomain {
  constructor(private readonly domain: string) {}
  has(domain: string): boolean {
    return domain === this.domain;
  }
}

const NOT_BOUND_POD = rejected(
  NAME,
  Code.Unschedulable,
  Reason.WorkspaceUnavailable,
  "not the workspace's pod",
);

function waiting(message: string): Status {
  return rejected(NAME, Code.UnschedulableAndUnresolvable, Reason.WorkspaceUnavailable, message);
}

/** The Runtime the workspace belongs to: its spec, else the one it was bound with. */
export function workspaceRuntime(ws: PersistentWorkspace): string | undefined {
  return ws.spec.runtime ?? ws.status?.runtime;
}

/**
 * Why the workspace cannot take the Run now, or the pod it must go to. Pure, for the plugin and
 * its tests. Messages name the workspace and say what to do; they carry no pod lists.
 */
export function workspaceVerdict(
  run: Pick<RunRequest, "namespace" | "runtimeKey" | "workspace">,
  ws: PersistentWorkspace | undefined,
): Status | Bound {
  const name = run.workspace ?? "";
  const ns = run.namespace;
  if (!ws) {
    return waiting(
      `PersistentWorkspace "${name}" not found in namespace "${ns}": create it (kubectl get persistentworkspaces -n ${ns}); the Run is placed once it is bound`,
    );
  }
  if (ws.metadata.deletionTimestamp) {
    return waiting(`PersistentWorkspace "${name}" is being deleted: it takes no new Runs`);
  }
  const s = ws.status;
  if (s?.phase === WorkspacePhase.Lost) {
    return waiting(
      `PersistentWorkspace "${name}" is Lost (${s.message ?? "its pod is gone"}): its data is gone for good; delete the Run, or create a new workspace and a new Run`,
    );
  }
  if (ws.spec.released || s?.phase === WorkspacePhase.Released) {
    return waiting(`PersistentWorkspace "${name}" is Released: it takes no new Runs (spec.released)`);
  }
  const runtime = workspaceRuntime(ws);
  const runRuntime = run.runtimeKey.slice(ns.length + 1);
  if (runtime !== undefined && runtime !== runRuntime) {
    return waiting(
      `PersistentWorkspace "${name}" belongs to Runtime "${runtime}", this Run names Runtime "${runRuntime}": a workspace's directory lives on its Runtime's pods; use spec.runtime "${runtime}"`,
    );
  }
  if (s?.phase !== WorkspacePhase.Bound || !s.boundPod || !s.boundPodUID) {
    const why = s?.message ? `: ${s.message}` : "";
    return waiting(`PersistentWorkspace "${name}" is not bound to a pod yet${why}`);
  }
  return { pod: s.boundPod, uid: s.boundPodUID };
}

function isStatus(v: Status | Bound): v is Status {
  return (v as Status).code !== undefined;
}

export class Workspace implements PreFilterPlugin {
  readonly name = NAME;

  constructor(private readonly workspaces: WorkspaceLookup) {}

  preFilter(state: CycleState, run: RunRequest, _runtime: RuntimeView): Verdict {
    if (run.workspace === undefined) return undefined;
    const v = workspaceVerdict(run, this.workspaces.get(`${run.namespace}/${run.workspace}`));
    if (isStatus(v)) return v;
    state.narrow(new OneDomain(domainOf(`${run.namespace}/${v.pod}`, v.uid)), NOT_BOUND_POD);
    return undefined;
  }
}

/** The factory for the registry; without a lookup every workspace Run waits as "not found". */
export function factory(workspaces: WorkspaceLookup | undefined) {
  return (args: unknown): Workspace => {
    if (args !== undefined && args !== null && Object.keys(args as object).length > 0) {
      throw new Error(`${NAME} takes no args`);
    }
    return new Workspace(workspaces ?? NO_LOOKUP);
  };
}
