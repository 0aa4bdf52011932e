/** Informer events → WorkflowRun keys: the WorkflowRun itself, and the parent of any child that changed. */

import { keyOf } from "@kruntimes/kube";
import type { Logger } from "pino";
import type { Informers } from "../manager/informers.ts";
import type { Controller } from "../reconcile/controller.ts";
import type { ChildKind, WorkflowIndex } from "./workflow-index.ts";

export function wireWorkflows(i: Informers, index: WorkflowIndex, c: Controller, log: Logger): void {
  const enqueue = (key: string | undefined) => {
    if (key !== undefined) c.enqueue(key);
  };
  const child = (kind: ChildKind) => ({
    add: (o: Parameters<WorkflowIndex["changed"]>[1]) => enqueue(index.changed(kind, o)),
    update: (o: Parameters<WorkflowIndex["changed"]>[1]) => enqueue(index.changed(kind, o)),
    delete: (o: Parameters<WorkflowIndex["changed"]>[1]) => enqueue(index.deleted(kind, o)),
  });
  i.workflowRuns.on({
    add: (w) => {
      enqueue(keyOf(w));
      enqueue(index.changed("children", w));
    },
    update: (w) => {
      enqueue(keyOf(w));
      enqueue(index.changed("children", w));
    },
    delete: (w) => enqueue(index.deleted("children", w)),
    error: (err) => log.warn({ err, informer: "workflowruns" }, "watch failed; relisting"),
  });
  i.runs.on(child("runs"));
  i.workspaces.on(child("workspaces"));
}
