/**
 * Pod phase from container statuses: a port of kubelet's getPhase (pkg/kubelet/kubelet_pods.go),
 * including native sidecars (restartable init containers), which do not decide the phase once
 * started, and `podIsTerminal` (the pod was stopped for good, e.g. deleted).
 */
import type { ContainerStatus, PodPhase, PodSpec } from "../api/types.ts";

export function podPhase(
  spec: PodSpec,
  init: ContainerStatus[],
  app: ContainerStatus[],
  podIsTerminal: boolean,
): PodPhase {
  const byName = (list: ContainerStatus[], name: string) => list.find((s) => s.name === name);
  let pendingRegularInit = 0;
  let pendingSidecars = 0;
  let failedInit = 0;
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;

  for (const c of spec.initContainers ?? []) {
    const s = byName(init, c.name);
    if (c.restartPolicy === "Always") {
      if (!s) unknown++;
      else if (s.state.running) {
        if (!s.started) pendingSidecars++;
        running++;
      } else if (s.state.waiting && !s.lastState.terminated) {
        pendingSidecars++;
        waiting++;
      }
      continue;
    }
    if (!s || s.state.running) pendingRegularInit++;
    else if (s.state.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state.waiting && s.lastState.terminated) {
      if (s.lastState.terminated.exitCode !== 0) failedInit++;
    } else pendingRegularInit++;
  }

  for (const c of spec.containers) {
    const s = byName(app, c.name);
    if (!s) unknown++;
    else if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting && s.lastState.terminated) stopped++;
    else if (s.state.waiting) waiting++;
    else unknown++;
  }

  const policy = spec.restartPolicy ?? "Always";
  if (failedInit > 0 && policy === "Never") return "Failed";
  if (pendingRegularInit > 0 || pendingSidecars > 0 || waiting > 0) return "Pending";
  if (running > 0 && unknown === 0) return "Running";
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (podIsTerminal) return stopped === succeeded ? "Succeeded" : "Failed";
    if (policy === "Always") return "Running";
    if (stopped === succeeded) return "Succeeded";
    if (policy === "Never") return "Failed";
    return "Running";
  }
  return "Pending";
}

export const isTerminalPhase = (p: PodPhase | undefined) => p === "Succeeded" || p === "Failed";
