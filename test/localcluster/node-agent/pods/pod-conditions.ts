/**
 * The pod conditions kubelet owns (PodReadyToStartContainers, Initialized, ContainersReady,
 * Ready, with kubelet's reasons and messages), merged into the existing list so conditions of
 * others (PodScheduled, DisruptionTarget, readiness gates) stay, and a condition keeps its
 * lastTransitionTime while its status does not change.
 */
import type { ContainerStatus, PodCondition, PodPhase, PodSpec } from "../api/types.ts";

export const OWNED = ["PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready"] as const;

type Cond = Omit<PodCondition, "lastTransitionTime" | "lastProbeTime">;

function cond(type: string, ok: boolean, reason?: string, message?: string): Cond {
  return ok
    ? { type, status: "True" }
    : { type, status: "False", ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

export interface ConditionInput {
  spec: PodSpec;
  phase: PodPhase;
  sandboxReady: boolean;
  init: ContainerStatus[];
  app: ContainerStatus[];
  existing: PodCondition[];
}

export function podConditions(i: ConditionInput, now: string): PodCondition[] {
  const sidecars = new Set(
    (i.spec.initContainers ?? []).filter((c) => c.restartPolicy === "Always").map((c) => c.name),
  );
  const incomplete = (i.spec.initContainers ?? [])
    .filter((c) => {
      const s = i.init.find((x) => x.name === c.name);
      if (sidecars.has(c.name)) return !s?.started;
      return s?.state.terminated?.exitCode !== 0;
    })
    .map((c) => c.name);
  // Once the pod ran its init containers, a later terminal phase does not un-initialize it.
  const initialized = incomplete.length === 0 || i.phase === "Succeeded" || i.phase === "Failed";

  const unready = [...i.init.filter((s) => sidecars.has(s.name)), ...i.app]
    .filter((s) => !s.ready)
    .map((s) => s.name);
  let containersReady: Cond;
  if (i.phase === "Succeeded") containersReady = cond("ContainersReady", false, "PodCompleted");
  else if (unready.length) {
    containersReady = cond(
      "ContainersReady",
      false,
      "ContainersNotReady",
      `containers with unready status: [${unready.join(" ")}]`,
    );
  } else containersReady = cond("ContainersReady", true);

  let ready: Cond = { ...containersReady, type: "Ready" };
  if (containersReady.status === "True") {
    for (const g of i.spec.readinessGates ?? []) {
      const c = i.existing.find((x) => x.type === g.conditionType);
      if (!c) {
        ready = cond(
          "Ready",
          false,
          "ReadinessGatesNotReady",
          `corresponding condition of pod readiness gate "${g.conditionType}" does not exist.`,
        );
        break;
      }
      if (c.status !== "True") {
        ready = cond(
          "Ready",
          false,
          "ReadinessGatesNotReady",
          `the status of pod readiness gate "${g.conditionType}" is not "True", but ${c.status}`,
        );
        break;
      }
    }
  }

  const ours: Cond[] = [
    cond("PodReadyToStartContainers", i.sandboxReady),
    initialized
      ? cond("Initialized", true)
      : cond(
          "Initialized",
          false,
          "ContainersNotInitialized",
          `containers with incomplete status: [${incomplete.join(" ")}]`,
        ),
    containersReady,
    ready,
  ];
  const out: PodCondition[] = i.existing.filter((c) => !(OWNED as readonly string[]).includes(c.type));
  for (const c of ours) {
    const prev = i.existing.find((x) => x.type === c.type);
    const lastTransitionTime =
      prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : now;
    out.push({ ...c, lastProbeTime: null, lastTransitionTime });
  }
  return out;
}
