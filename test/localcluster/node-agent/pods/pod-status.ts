/**
 * The pod status a kubelet would report, computed from the container runners: phase, the
 * standard conditions (transition times kept while a status holds), container statuses, IPs.
 */
import type { ContainerStatus, Pod, PodCondition, PodPhase, PodStatus } from "../api/types.ts";
import { rfc3339Nano } from "../logs/cri-log-format.ts";
import type { ContainerRunner } from "./container-runner.ts";

export interface PodView {
  pod: Pod;
  podIP: string;
  startTime: string;
  sandboxReady: boolean;
  initDone: boolean;
  init: ContainerRunner[];
  app: ContainerRunner[];
  /** True when a terminated app container will not be started again. */
  finalFor(r: ContainerRunner): boolean;
  failedMessage?: string;
}

function phaseOf(v: PodView): PodPhase {
  if (v.failedMessage) return "Failed";
  if (!v.initDone) return "Pending";
  if (v.app.some((r) => r.running)) return "Running";
  if (v.app.every((r) => r.state.terminated && v.finalFor(r))) {
    return v.app.every((r) => r.state.terminated?.exitCode === 0) ? "Succeeded" : "Failed";
  }
  if (v.app.some((r) => r.everStarted)) return "Running";
  return "Pending";
}

function cond(type: string, ok: boolean, old: PodCondition[] | undefined, reason?: string): PodCondition {
  const status = ok ? "True" : "False";
  const prev = old?.find((c) => c.type === type);
  return {
    type,
    status,
    ...(reason && !ok ? { reason } : {}),
    lastProbeTime: null,
    lastTransitionTime:
      prev?.status === status && prev.lastTransitionTime
        ? prev.lastTransitionTime
        : rfc3339Nano(Date.now()).replace(/\.\d+Z$/, "Z"),
  };
}

export function computeStatus(v: PodView): PodStatus {
  const old = v.pod.status?.conditions;
  const phase = phaseOf(v);
  const imageOf = (r: ContainerRunner) => r.spec.image ?? "";
  const containerStatuses: ContainerStatus[] = v.app.map((r) => r.status(imageOf(r)));
  const initContainerStatuses: ContainerStatus[] = v.init.map((r) => r.status(imageOf(r)));
  const containersReady = v.initDone && v.app.every((r) => r.ready);
  const gates = (v.pod.spec.readinessGates ?? []).every(
    (g) => old?.find((c) => c.type === g.conditionType)?.status === "True",
  );
  const conditions: PodCondition[] = [
    cond("PodReadyToStartContainers", v.sandboxReady, old),
    cond("Initialized", v.initDone, old, "ContainersNotInitialized"),
    cond("Ready", containersReady && gates && phase === "Running", old, "ContainersNotReady"),
    cond("ContainersReady", containersReady, old, "ContainersNotReady"),
  ];
  const scheduled = old?.find((c) => c.type === "PodScheduled");
  if (scheduled) conditions.push(scheduled);
  for (const c of old ?? []) if (!conditions.some((x) => x.type === c.type)) conditions.push(c);
  return {
    phase,
    conditions,
    hostIP: "127.0.0.1",
    hostIPs: [{ ip: "127.0.0.1" }],
    ...(v.podIP ? { podIP: v.podIP, podIPs: [{ ip: v.podIP }] } : {}),
    startTime: v.startTime,
    ...(v.init.length ? { initContainerStatuses } : {}),
    containerStatuses,
    ...(v.failedMessage ? { message: v.failedMessage, reason: "DeadlineExceeded" } : {}),
    qosClass: v.pod.status?.qosClass ?? "BestEffort",
  };
}

/** Status equality ignoring transition-time churn: decides whether to write. */
export function sameStatus(a: PodStatus | undefined, b: PodStatus): boolean {
  if (!a) return false;
  const strip = (s: PodStatus) =>
    JSON.stringify({ ...s, conditions: s.conditions?.map((c) => [c.type, c.status]).sort() });
  return strip(a) === strip(b);
}
