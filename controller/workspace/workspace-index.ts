/**
 * Who uses which PersistentWorkspace, kept from the Runs and workspace informers so that every
 * event finds exactly the objects it concerns — never a scan of a namespace:
 * - the Runs naming a workspace (all of them, and the Pending ones apart: those a change of the
 *   workspace must wake);
 * - the workspaces bound to a pod (a pod gone or replaced makes them Lost; capacity freed on it
 *   wakes their waiting Runs);
 * - the workspaces of a namespace not bound yet (a pod becoming available may bind them).
 */
import type { PersistentWorkspace, Run } from "@kruntimes/api";
import { keyOf } from "@kruntimes/kube";
import { isPending } from "../scheduler/run-request.ts";

const NONE: ReadonlySet<string> = new Set();

/** `namespace/name` of the workspace a Run names, if any. */
export function workspaceKeyOf(run: Run): string | undefined {
  const name = run.spec.workspace?.name;
  return name ? `${run.metadata.namespace ?? ""}/${name}` : undefined;
}

function addTo(m: Map<string, Set<string>>, k: string, v: string): void {
  let s = m.get(k);
  if (!s) {
    s = new Set();
    m.set(k, s);
  }
  s.add(v);
}

function removeFrom(m: Map<string, Set<string>>, k: string | undefined, v: string): void {
  if (k === undefined) return;
  const s = m.get(k);
  if (!s) return;
  s.delete(v);
  if (s.size === 0) m.delete(k);
}

export class WorkspaceIndex {
  private readonly runs = new Map<string, Set<string>>();
  private readonly pendingRuns = new Map<string, Set<string>>();
  private readonly workspaceOfRun = new Map<string, string>();
  private readonly byPod = new Map<string, Set<string>>();
  private readonly podOf = new Map<string, string>();
  private readonly unbound = new Map<string, Set<string>>();
  private readonly namespaceOfUnbound = new Map<string, string>();

  /** Runs naming the workspace, ended ones included. */
  runsOf(wsKey: string): ReadonlySet<string> {
    return this.runs.get(wsKey) ?? NONE;
  }
  /** Pending Runs naming the workspace (the ones its changes wake). */
  pendingRunsOf(wsKey: string): ReadonlySet<string> {
    return this.pendingRuns.get(wsKey) ?? NONE;
  }
  /** Workspaces bound to the pod `namespace/name`. */
  boundTo(podKey: string): ReadonlySet<string> {
    return this.byPod.get(podKey) ?? NONE;
  }
  /** Workspaces of the namespace without a bound pod (not deleted). */
  unboundIn(namespace: string): ReadonlySet<string> {
    return this.unbound.get(namespace) ?? NONE;
  }

  /** Returns the workspace key the Run concerns (now or before), for the caller to act on. */
  runChanged(run: Run): string | undefined {
    const key = keyOf(run);
    const ws = workspaceKeyOf(run);
    const before = this.workspaceOfRun.get(key);
    if (before !== undefined && before !== ws) this.runDeleted(key);
    if (ws === undefined) return before;
    this.workspaceOfRun.set(key, ws);
    addTo(this.runs, ws, key);
    if (isPending(run) && !run.metadata.deletionTimestamp) addTo(this.pendingRuns, ws, key);
    else removeFrom(this.pendingRuns, ws, key);
    return ws;
  }

  runDeleted(runKey: string): string | undefined {
    const ws = this.workspaceOfRun.get(runKey);
    if (ws === undefined) return undefined;
    this.workspaceOfRun.delete(runKey);
    removeFrom(this.runs, ws, runKey);
    removeFrom(this.pendingRuns, ws, runKey);
    return ws;
  }

  workspaceChanged(ws: PersistentWorkspace): void {
    const key = keyOf(ws);
    const ns = ws.metadata.namespace ?? "";
    const pod = ws.status?.boundPodUID && ws.status.boundPod ? `${ns}/${ws.status.boundPod}` : undefined;
    const before = this.podOf.get(key);
    if (before !== pod) {
      removeFrom(this.byPod, before, key);
      if (pod === undefined) this.podOf.delete(key);
      else {
        this.podOf.set(key, pod);
        addTo(this.byPod, pod, key);
      }
    }
    if (pod === undefined && !ws.metadata.deletionTimestamp) {
      this.namespaceOfUnbound.set(key, ns);
      addTo(this.unbound, ns, key);
    } else {
      removeFrom(this.unbound, this.namespaceOfUnbound.get(key), key);
      this.namespaceOfUnbound.delete(key);
    }
  }

  workspaceDeleted(wsKey: string): void {
    removeFrom(this.byPod, this.podOf.get(wsKey), wsKey);
    this.podOf.delete(wsKey);
    removeFrom(this.unbound, this.namespaceOfUnbound.get(wsKey), wsKey);
    this.namespaceOfUnbound.delete(wsKey);
  }
}
