/**
 * The PodStatus the agent reports for a pod runtime: phase, conditions, IPs, startTime and the
 * container statuses (init containers in spec order, app containers sorted by name, as kubelet).
 * A phase that was terminal stays terminal.
 */
import { apiTime } from "../api/api-time.ts";
import type { Pod, PodStatus } from "../api/types.ts";
import { podConditions } from "./pod-conditions.ts";
import { isTerminalPhase, podPhase } from "./pod-phase.ts";
import type { PodRuntime } from "./pod-runtime.ts";

export function buildStatus(rt: PodRuntime, pod: Pod, now = apiTime()): PodStatus {
  const name = pod.metadata.name ?? "";
  const ns = pod.metadata.namespace ?? "";
  const init = rt.init.map((c) => c.status(name, ns));
  const app = rt.app
    .map((c) => c.status(name, ns))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const prior = pod.status ?? {};
  let phase = podPhase(pod.spec, init, app, rt.stopped);
  if (rt.deadlineExceeded && rt.stopped) phase = "Failed";
  if (isTerminalPhase(prior.phase)) phase = prior.phase!;
  const ip = rt.ip;
  const status: PodStatus = {
    phase,
    conditions: podConditions(
      {
        spec: pod.spec,
        phase,
        sandboxReady: rt.sandboxReady && !rt.stopped,
        init,
        app,
        existing: prior.conditions ?? [],
      },
      now,
    ),
    hostIP: rt.sandbox.facts.hostIP,
    hostIPs: [{ ip: rt.sandbox.facts.hostIP }],
    podIP: ip,
    podIPs: [{ ip }],
    startTime: prior.startTime ?? rt.startTime,
    containerStatuses: app,
  };
  if (init.length) status.initContainerStatuses = init;
  if (rt.deadlineExceeded) {
    status.reason = "DeadlineExceeded";
    status.message = "Pod was active on the node longer than the specified deadline";
  }
  return status;
}

/** The fields the agent owns, for "did anything change" (key order and unset fields ignored). */
export function statusFingerprint(s: PodStatus | undefined): string {
  if (!s) return "";
  const pick = {
    phase: s.phase,
    reason: s.reason,
    message: s.message,
    conditions: [...(s.conditions ?? [])]
      .map((c) => ({
        t: c.type,
        s: c.status,
        r: c.reason ?? "",
        m: c.message ?? "",
        l: c.lastTransitionTime ?? "",
      }))
      .sort((a, b) => (a.t < b.t ? -1 : 1)),
    hostIP: s.hostIP,
    podIP: s.podIP,
    startTime: s.startTime,
    init: s.initContainerStatuses ?? [],
    app: s.containerStatuses ?? [],
  };
  return stableJson(pick);
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}
