/**
 * What the controller wants a PersistentWorkspace to look like, from what it observes: the pure
 * half of the reconciler (the other half writes it). Level-triggered: the same facts always give
 * the same plan.
 *
 * - Binding is metadata only: once a Runtime is known (spec.runtime, or the earliest Run naming
 *   the workspace) and one of its pods is available, the workspace is Bound to the pod that
 *   rendezvous hashing of its UID picks. No capacity is reserved.
 * - The bound pod not Ready, heartbeat stale: the binding stays. The pod gone, or a pod of the
 *   same name with another UID: Lost, for good (the binding is fenced on `boundPodUID`).
 * - `spec.released`: Released (no new Runs; running ones finish).
 * - `activeRuns`: Runs naming it that hold a pod (Scheduled, Running, Ready, Finalizing);
 *   `lastUsedMicros`: when the last of them ended.
 * - TTL (`ttlSecondsAfterUnused`): due that long after `lastUsedMicros` (or creation, if never
 *   used) while no Run is active and none waits for it (Runs waiting on a Released or Lost
 *   workspace never run, so they do not keep it).
 * - Deletion: the finalizer is the controller's to remove only where no runtimed can — never
 *   bound, or Lost; otherwise runtimed on the bound pod removes the directory and then it.
 */
import {
  type Condition,
  isTerminalPhase,
  type PersistentWorkspace,
  type PersistentWorkspaceStatus,
  type Run,
  WORKSPACE_FINALIZER,
  WorkspacePhase,
  workspacePath,
} from "@kruntimes/api";
import { parseTime } from "../kube-types.ts";
import { holdsCapacity, isPending } from "../scheduler/run-request.ts";
import { kubeTime, setCondition } from "../status/conditions.ts";
import { type Candidate, choosePod } from "./binding.ts";

export const BOUND_CONDITION = "Bound";

export interface WorkspaceFacts {
  ws: PersistentWorkspace;
  /** The Runs naming it (any phase). */
  runs: readonly Run[];
  /** The pod `name` in the workspace's namespace as the controller sees it, if it exists. */
  pod(name: string): { uid: string } | undefined;
  /** Pods of Runtime `runtime` (same namespace) a workspace may bind to now. */
  candidates(runtime: string): readonly Candidate[];
  nowMs: number;
}

export interface WorkspacePlan {
  status: PersistentWorkspaceStatus;
  /** Add the finalizer before writing the status: the workspace is being bound. */
  addFinalizer: boolean;
  /** Deleted, and no runtimed will clean up (never bound, or Lost): remove the finalizer. */
  removeFinalizer: boolean;
  /** `ttlSecondsAfterUnused` makes it due for deletion at this epoch ms. */
  deleteAtMs?: number;
}

interface Usage {
  active: number;
  waiting: number;
  lastEndedMicros?: number;
  /** The Runtime of the earliest-created Run still to run or running. */
  firstRuntime?: string;
}

function usageOf(runs: readonly Run[]): Usage {
  let active = 0;
  let waiting = 0;
  let lastEndedMicros: number | undefined;
  let first: Run | undefined;
  for (const run of runs) {
    if (holdsCapacity(run)) active++;
    else if (isPending(run) && !run.metadata.deletionTimestamp) waiting++;
    else if (isTerminalPhase(run.status?.phase) && run.status?.assignment) {
      const t = run.status.timing;
      const ended = t?.finishedMicros ?? t?.reportedMicros;
      if (ended !== undefined) lastEndedMicros = Math.max(lastEndedMicros ?? 0, ended);
    }
    if (!isTerminalPhase(run.status?.phase) && (!first || earlier(run, first))) first = run;
  }
  return { active, waiting, lastEndedMicros, firstRuntime: first?.spec.runtime };
}

function earlier(a: Run, b: Run): boolean {
  const ta = parseTime(a.metadata.creationTimestamp);
  const tb = parseTime(b.metadata.creationTimestamp);
  if (ta !== tb && Number.isFinite(ta) && Number.isFinite(tb)) return ta < tb;
  return (a.metadata.name ?? "") < (b.metadata.name ?? "");
}

interface Phase {
  phase: PersistentWorkspaceStatus["phase"];
  message: string;
  condition: { status: "True" | "False"; reason: string };
}

export function planWorkspace(f: WorkspaceFacts): WorkspacePlan {
  const { ws, nowMs } = f;
  const prev = ws.status ?? {};
  const name = ws.metadata.name ?? "";
  const deleting = Boolean(ws.metadata.deletionTimestamp);
  const usage = usageOf(f.runs);
  const next: PersistentWorkspaceStatus = {
    ...prev,
    observedGeneration: ws.metadata.generation ?? 1,
    activeRuns: usage.active,
  };
  let addFinalizer = false;
  let p: Phase;

  if (prev.boundPodUID && prev.boundPod) {
    const pod = prev.phase === WorkspacePhase.Lost ? undefined : f.pod(prev.boundPod);
    if (prev.phase === WorkspacePhase.Lost) {
      p = {
        phase: WorkspacePhase.Lost,
        message: prev.message ?? `pod "${prev.boundPod}" is gone`,
        condition: { status: "False", reason: "PodLost" },
      };
    } else if (!pod) {
      p = lost(`pod "${prev.boundPod}" is gone: the directory went with it`);
    } else if (pod.uid !== prev.boundPodUID) {
      p = lost(
        `pod "${prev.boundPod}" was replaced (UID ${prev.boundPodUID} → ${pod.uid}): the directory was on the old pod`,
      );
    } else if (ws.spec.released) {
      p = released(
        `released: no new Runs; the directory stays on pod "${prev.boundPod}" until deleted`,
        "True",
      );
    } else {
      p = {
        phase: WorkspacePhase.Bound,
        message: `bound to pod "${prev.boundPod}"`,
        condition: { status: "True", reason: "Bound" },
      };
    }
  } else if (ws.spec.released) {
    p = released("released before it was bound: it never had a directory", "False");
  } else {
    const runtime = ws.spec.runtime ?? prev.runtime ?? usage.firstRuntime;
    const pick = runtime && !deleting ? choosePod(ws.metadata.uid ?? "", f.candidates(runtime)) : undefined;
    if (pick && runtime) {
      addFinalizer = !ws.metadata.finalizers?.includes(WORKSPACE_FINALIZER);
      next.runtime = runtime;
      next.boundPod = pick.name;
      next.boundPodUID = pick.uid;
      next.path = workspacePath(name, ws.metadata.uid ?? "");
      p = {
        phase: WorkspacePhase.Bound,
        message: `bound to pod "${pick.name}"`,
        condition: { status: "True", reason: "Bound" },
      };
    } else {
      const message = deleting
        ? "being deleted before it was bound"
        : runtime
          ? `no available pod of Runtime "${runtime}" to bind to (Ready, heartbeating, not held by a session); it binds as soon as one is`
          : "spec.runtime is unset: the first Run naming this workspace picks the Runtime";
      p = { phase: WorkspacePhase.Pending, message, condition: { status: "False", reason: "Pending" } };
    }
  }

  next.phase = p.phase;
  next.message = p.message;
  next.conditions = setCondition(
    prev.conditions as Condition[] | undefined,
    { type: BOUND_CONDITION, status: p.condition.status, reason: p.condition.reason, message: p.message },
    kubeTime(nowMs),
    next.observedGeneration,
  );
  // The TTL counts from the end of the last Run: kept while Runs are active, moved when they end.
  if (usage.active === 0) {
    const ended = Math.max(prev.lastUsedMicros ?? 0, usage.lastEndedMicros ?? 0);
    if (ended > 0) next.lastUsedMicros = ended;
    else if ((prev.activeRuns ?? 0) > 0) next.lastUsedMicros = nowMs * 1000;
  }

  const hasFinalizer = ws.metadata.finalizers?.includes(WORKSPACE_FINALIZER) ?? false;
  const removeFinalizer = deleting && hasFinalizer && (p.phase === WorkspacePhase.Lost || !next.boundPodUID);

  let deleteAtMs: number | undefined;
  const ttl = ws.spec.ttlSecondsAfterUnused;
  const waitersCount = p.phase === WorkspacePhase.Bound || p.phase === WorkspacePhase.Pending;
  if (ttl !== undefined && !deleting && usage.active === 0 && !(waitersCount && usage.waiting > 0)) {
    const fromMs =
      next.lastUsedMicros !== undefined
        ? next.lastUsedMicros / 1000
        : parseTime(ws.metadata.creationTimestamp);
    deleteAtMs = (Number.isFinite(fromMs) ? fromMs : nowMs) + ttl * 1000;
  }
  return { status: next, addFinalizer, removeFinalizer, ...(deleteAtMs !== undefined ? { deleteAtMs } : {}) };
}

function lost(message: string): Phase {
  return { phase: WorkspacePhase.Lost, message, condition: { status: "False", reason: "PodLost" } };
}

function released(message: string, bound: "True" | "False"): Phase {
  return { phase: WorkspacePhase.Released, message, condition: { status: bound, reason: "Released" } };
}
