/**
 * A Runtime's status from what the controller observes of its pods (informers) and runtimed's
 * heartbeats — not from the Deployment's own status, which lags behind by the ReplicaSet and
 * Deployment controllers' round trips. `readyReplicas` counts pods whose Ready condition is
 * True; `availableReplicas` those the scheduler would place a Run on right now.
 */
import { type Runtime, RuntimeConditionType, type RuntimeStatus } from "@kruntimes/api";
import type { PodInfo } from "../scheduler/cache/pod-info.ts";
import { kubeTime, setCondition } from "../status/conditions.ts";
import { canonicalJson } from "../util/canonical-json.ts";

export interface StatusInputs {
  pods: readonly PodInfo[];
  templateHash: string | undefined;
  /** Set when the Runtime could not be rendered or applied. */
  failure?: { reason: string; message: string };
  deploymentExists: boolean;
  nowMs: number;
  /** With spec.autoscaling: the count the autoscaler wants (spec.replicas does not apply). */
  desiredReplicas?: number;
  /** Pending Runs of this Runtime in the scheduler's queue (only the leader knows). */
  pendingRuns?: number;
}

export function runtimeStatus(rt: Runtime, i: StatusInputs): RuntimeStatus {
  const desired = i.desiredReplicas ?? rt.spec.replicas ?? 1;
  let replicas = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  for (const p of i.pods) {
    if (p.terminating) continue;
    replicas++;
    if (p.ready) ready++;
    if (p.isAvailable(i.nowMs)) available++;
    if (i.templateHash && p.templateHash === i.templateHash) updated++;
  }
  const now = kubeTime(i.nowMs);
  const gen = rt.metadata.generation;
  const summary = `${ready}/${desired} pods ready, ${available} accepting Runs`;

  let progressing: { status: "True" | "False"; reason: string; message: string };
  if (i.failure) progressing = { status: "False", ...i.failure };
  else if (!i.deploymentExists)
    progressing = { status: "True", reason: "Creating", message: "creating the Deployment" };
  else if (updated < replicas || updated < desired)
    progressing = {
      status: "True",
      reason: replicas > updated ? "RollingOut" : "ScalingUp",
      message: `${updated}/${desired} pods on the current template`,
    };
  else if (replicas > desired)
    progressing = { status: "True", reason: "ScalingDown", message: `${replicas} pods, ${desired} wanted` };
  else if (ready < desired) progressing = { status: "True", reason: "WaitingForPods", message: summary };
  else progressing = { status: "False", reason: "Complete", message: summary };

  let readyCond: { status: "True" | "False"; reason: string; message: string };
  if (i.failure) readyCond = { status: "False", ...i.failure };
  else if (desired === 0)
    readyCond = {
      status: "False",
      reason: "ScaledToZero",
      message: rt.spec.autoscaling
        ? "scaled to zero by the autoscaler: the next Run starts a pod"
        : "spec.replicas is 0",
    };
  else if (ready >= desired && available >= 1)
    readyCond = { status: "True", reason: "PodsReady", message: summary };
  else
    readyCond = { status: "False", reason: ready === 0 ? "NoPodsReady" : "PodsNotReady", message: summary };

  let conditions = setCondition(
    rt.status?.conditions,
    { type: RuntimeConditionType.Ready, ...readyCond },
    now,
    gen,
  );
  conditions = setCondition(conditions, { type: RuntimeConditionType.Progressing, ...progressing }, now, gen);
  return {
    ...(gen !== undefined ? { observedGeneration: gen } : {}),
    replicas,
    readyReplicas: ready,
    availableReplicas: available,
    ...(i.pendingRuns !== undefined ? { pendingRuns: i.pendingRuns } : {}),
    conditions: conditions.sort((a, b) => (a.type < b.type ? -1 : 1)),
  };
}

/** Equal ignoring condition order (lastTransitionTime is kept by setCondition when unchanged). */
export function sameStatus(a: RuntimeStatus | undefined, b: RuntimeStatus): boolean {
  if (!a) return false;
  // status.autoscaling is the autoscaler's (its own field manager): not compared here.
  const norm = ({ autoscaling: _, ...s }: RuntimeStatus) => ({
    ...s,
    conditions: [...(s.conditions ?? [])].sort((x, y) => (x.type < y.type ? -1 : 1)),
  });
  return canonicalJson(norm(a)) === canonicalJson(norm(b));
}
