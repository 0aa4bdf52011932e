/**
 * A Runtime's load from what the scheduler already holds in memory — no API reads: capacity in
 * use on its pods (the cache's accounting of placed and assumed Runs) plus the requests of its
 * Pending Runs in the scheduling queue that a pod of this Runtime could take.
 */
import { Reason } from "@kruntimes/api";
import type { PodInfo } from "../scheduler/cache/pod-info.ts";
import type { QueuedRun } from "../scheduler/queue/queued-run.ts";
import type { PoolLoad } from "./decide.ts";

export function poolLoad(
  runtimeKey: string,
  perPod: Readonly<Record<string, number>>,
  pods: readonly PodInfo[],
  queued: Iterable<QueuedRun>,
): PoolLoad {
  const used: Record<string, number> = {};
  const pending: Record<string, number> = {};
  const add = (into: Record<string, number>, name: string, n: number) => {
    into[name] = (into[name] ?? 0) + n;
  };
  for (const p of pods) {
    if (p.terminating) continue;
    // A session's pod (held or spent) is one whole pod in use: nothing else lands there.
    if (p.sealed) {
      for (const [name, n] of Object.entries(perPod)) add(used, name, n);
      continue;
    }
    for (const [name, n] of Object.entries(p.used)) if (n > 0) add(used, name, n);
  }
  let pendingRuns = 0;
  for (const qr of queued) {
    if (qr.runtimeKey !== runtimeKey || !helpedByMorePods(qr, perPod)) continue;
    pendingRuns++;
    if (qr.exclusive) {
      for (const [name, n] of Object.entries(perPod)) add(pending, name, n);
      continue;
    }
    for (let i = 0; i < qr.names.length; i++) add(pending, qr.names[i] as string, qr.amounts[i] as number);
  }
  return { perPod, used, pending, pendingRuns };
}

/**
 * Whether another pod could take the Run: its request fits what one pod offers, and it does not
 * wait for its PersistentWorkspace's one bound pod.
 */
function helpedByMorePods(qr: QueuedRun, perPod: Readonly<Record<string, number>>): boolean {
  if (qr.waiting?.reason === Reason.WorkspaceUnavailable) return false;
  for (let i = 0; i < qr.names.length; i++)
    if ((qr.amounts[i] as number) > (perPod[qr.names[i] as string] ?? 0)) return false;
  return true;
}
