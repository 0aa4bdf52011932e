/**
 * Stopping a pod's containers as kubelet does on graceful deletion: app containers first, in
 * parallel, each running its preStop hook and then getting SIGTERM with what is left of the
 * grace period (at least 2 s after a preStop, kubelet's minimum), SIGKILL after it; then the
 * native sidecars in reverse order, then anything else still running.
 */
import type { ContainerRuntime } from "./container-runtime.ts";
import type { PodRuntime } from "./pod-runtime.ts";

const MIN_GRACE_AFTER_HOOK_MS = 2000;

async function stopContainer(
  c: ContainerRuntime,
  deadline: number,
  hooks: boolean,
  why: string,
): Promise<void> {
  if (!c.running) return;
  const preStop = c.spec.lifecycle?.preStop;
  if (hooks && preStop) {
    await c.probes.preStop(preStop, Math.max(0, deadline - Date.now()));
    deadline = Math.max(deadline, Date.now() + MIN_GRACE_AFTER_HOOK_MS);
  }
  await c.kill(Math.max(0, deadline - Date.now()), why, false);
}

/**
 * Stops everything of `rt` within `graceMs`; `hooks` false skips preStop (the pod object is gone,
 * or the agent shuts down). Marks the runtime stopped so status reports the terminal phase.
 */
export async function stopPod(rt: PodRuntime, graceMs: number, hooks: boolean, why: string): Promise<void> {
  rt.terminal = true;
  for (const c of rt.all) c.restartPending = false;
  const deadline = Date.now() + graceMs;
  await Promise.all(rt.app.map((c) => stopContainer(c, deadline, hooks, why)));
  for (const c of [...rt.init].reverse()) {
    // A sidecar gets what is left of the grace period, but at least kubelet's 2 s minimum.
    await stopContainer(c, Math.max(deadline, Date.now() + MIN_GRACE_AFTER_HOOK_MS), hooks, why);
  }
  rt.stopped = true;
}
