/**
 * Informer and cache events → the workspace index, the workspace reconciler's keys and the
 * scheduler's workspace wake-ups. Every event is routed by index to the objects it concerns.
 */
import type { PersistentWorkspace } from "@kruntimes/api";
import { keyOf } from "@kruntimes/kube";
import type { Logger } from "pino";
import type { Informers } from "../manager/informers.ts";
import type { Controller } from "../reconcile/controller.ts";
import type { CacheListener } from "../scheduler/cache/scheduler-cache.ts";
import type { WorkspaceWakeups } from "../scheduler/plugins/workspace/wakeups.ts";
import type { WorkspaceIndex } from "./workspace-index.ts";

export interface WorkspaceWiring {
  index: WorkspaceIndex;
  wakeups: WorkspaceWakeups;
  /** The workspace reconciler, looked up when events flow (it is made after the scheduler). */
  reconciler(): Controller;
  log: Logger;
}

export function wireWorkspaces(i: Informers, w: WorkspaceWiring): void {
  const enqueue = (key: string | undefined) => {
    if (key !== undefined) w.reconciler().enqueue(key);
  };
  const changed = (ws: PersistentWorkspace) => {
    const key = keyOf(ws);
    w.index.workspaceChanged(ws);
    enqueue(key);
    w.wakeups.workspaceChanged(key);
  };
  i.workspaces.on({
    add: changed,
    update: changed,
    delete: (ws) => {
      const key = keyOf(ws);
      w.index.workspaceDeleted(key);
      // Its waiting Runs now read "not found" (and the plugin says so).
      w.wakeups.workspaceChanged(key);
    },
    error: (err) => w.log.warn({ err, informer: "persistentworkspaces" }, "watch failed; relisting"),
  });
  // Registered after wiring.ts's own handlers: the scheduler has taken the Run in by now.
  i.runs.on({
    add: (run) => enqueue(w.index.runChanged(run)),
    update: (run) => enqueue(w.index.runChanged(run)),
    delete: (run) => enqueue(w.index.runDeleted(keyOf(run))),
  });
  const podChanged = (pod: { metadata: { namespace?: string; name?: string } }) => {
    for (const ws of w.index.boundTo(keyOf(pod))) enqueue(ws);
  };
  i.pods.on({ add: podChanged, update: podChanged, delete: podChanged });
}

/** The cache's transitions the workspaces care about (SchedulerSetup.cacheHooks). */
export function workspaceCacheHooks(w: WorkspaceWiring): Partial<CacheListener> {
  return {
    // A pod became available (or went): unbound workspaces of its namespace may bind now.
    runtimePodsChanged: (runtimeKey) => {
      const ns = runtimeKey.slice(0, runtimeKey.indexOf("/"));
      for (const ws of w.index.unboundIn(ns)) w.reconciler().enqueue(ws);
    },
    podFreed: (pod) => {
      w.wakeups.podFreed(pod.key, pod.free("runs"));
    },
  };
}
