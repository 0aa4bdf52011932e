/**
 * The WorkflowRun reconciler: load → calculate → apply.
 * - load: the WorkflowRun and its children from the informers (through WorkflowIndex);
 * - start (once): validate the graph, resolve and freeze every Workflow and Action it calls, and
 *   write `Running` with the frozen definitions — or `Failed` before any child exists;
 * - calculate: planWorkflowRun, pure;
 * - apply: create the missing children (deterministic names: AlreadyExists means a previous
 *   attempt made it), cancel, delete settled jobs' workspaces, then write the status as one
 *   JSON patch fenced on the resourceVersion it was calculated from.
 */
import {
  ActionResource,
  type ActionSpec,
  type PersistentWorkspace,
  type Run,
  RunResource,
  resolveDefinitions,
  validateWorkflowRunSpec,
  WorkflowPhase,
  WorkflowReason,
  WorkflowResource,
  type WorkflowRun,
  WorkflowRunResource,
  type WorkflowRunStatus,
  type WorkflowSpec,
  WorkspaceResource,
} from "@kruntimes/api";
import { isConflict, isNotFound, type KubeClient, KubeError, path } from "@kruntimes/kube";
import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import type { Reconciler } from "../reconcile/controller.ts";
import { Result } from "../reconcile/result.ts";
import { resultOfWriteError } from "../status/write-result.ts";
import { canonicalJson } from "../util/canonical-json.ts";
import type { Clock } from "../util/clock.ts";
import type { WorkflowIndex } from "./workflow-index.ts";
import { type Create, planWorkflowRun, WorkflowAnnotations } from "./workflow-plan.ts";

export interface WorkflowReconcilerDeps {
  wfruns: { get(key: string): WorkflowRun | undefined };
  runs: { get(key: string): Run | undefined };
  workspaces: { get(key: string): PersistentWorkspace | undefined };
  index: WorkflowIndex;
  client: KubeClient;
  clock: Clock;
  registry: Registry;
  log: Logger;
}

/** How long a child this process created may be missing from the informer before it counts as deleted. */
const EXPECTATION_MS = 60_000;
const TERMINAL: readonly string[] = [WorkflowPhase.Succeeded, WorkflowPhase.Failed, WorkflowPhase.Cancelled];

export class WorkflowReconciler implements Reconciler {
  readonly name = "workflow";
  private readonly expectations = new Map<string, number>();
  private readonly created: Counter<string>;
  private readonly finished: Counter<string>;

  constructor(private readonly d: WorkflowReconcilerDeps) {
    this.created = new Counter({
      name: "kruntimes_workflow_children_created_total",
      help: "Children WorkflowRuns created, by kind (Run, PersistentWorkspace, WorkflowRun).",
      labelNames: ["kind"],
      registers: [d.registry],
    });
    this.finished = new Counter({
      name: "kruntimes_workflowruns_finished_total",
      help: "WorkflowRuns that reached a terminal phase, by phase.",
      labelNames: ["phase"],
      registers: [d.registry],
    });
  }

  async reconcile(key: string): Promise<Result> {
    const w = this.d.wfruns.get(key);
    if (!w) return Result.done();
    if (w.metadata.deletionTimestamp) return Result.done();
    if (!w.status?.definitions) return this.start(w);
    const ns = w.metadata.namespace ?? "";
    if (TERMINAL.includes(w.status.phase ?? "")) {
      // Ended: nothing starts again; only job workspaces left behind (a restart mid-cleanup) go.
      try {
        for (const ws of this.d.index.of("workspaces", key)) {
          const obj = this.d.workspaces.get(`${ns}/${ws}`);
          if (obj && !obj.metadata.deletionTimestamp) await this.deleteWorkspace(ns, ws);
        }
      } catch (e) {
        return resultOfWriteError(e);
      }
      return this.expire(w);
    }
    const get = <T>(kind: "runs" | "workspaces" | "children", from: { get(k: string): T | undefined }) =>
      new Map(
        this.d.index
          .of(kind, key)
          .map((n) => [n, from.get(`${ns}/${n}`)] as const)
          .filter((e): e is [string, NonNullable<T>] => e[1] !== undefined),
      );
    const now = this.d.clock.now();
    const expected = (name: string) => (this.expectations.get(`${ns}/${name}`) ?? 0) > now - EXPECTATION_MS;
    const runs = get("runs", this.d.runs);
    const workspaces = get("workspaces", this.d.workspaces);
    const children = get("children", this.d.wfruns);
    try {
      await this.confirmMissing(w, { runs, workspaces, children }, expected);
    } catch (e) {
      return Result.backoff(`could not confirm a missing child: ${(e as Error).message}`);
    }
    const plan = planWorkflowRun({
      wfrun: w,
      runs,
      workspaces,
      children,
      expected,
      now: new Date(now).toISOString(),
    });
    try {
      // Workspaces first (a step Run waits for its workspace), then the rest at once: a fan-out's
      // children do not queue behind each other's apiserver round trips.
      for (const c of plan.creates) if (c.kind === "PersistentWorkspace") await this.create(c);
      await Promise.all(
        plan.creates.filter((c) => c.kind !== "PersistentWorkspace").map((c) => this.create(c)),
      );
      for (const c of plan.cancels) await this.cancel(ns, c.kind, c.name);
      for (const ws of plan.deleteWorkspaces) await this.deleteWorkspace(ns, ws);
      if (canonicalJson(plan.status) !== canonicalJson(w.status)) await this.writeStatus(w, plan.status);
    } catch (e) {
      return resultOfWriteError(e);
    }
    if (TERMINAL.includes(plan.status.phase ?? "") && !TERMINAL.includes(w.status.phase ?? "")) {
      this.finished.inc({ phase: plan.status.phase ?? "" });
      this.d.log.info(
        { workflowRun: key, phase: plan.status.phase, reason: plan.status.reason },
        `workflow run ${plan.status.message}`,
      );
    }
    return plan.requeueAfterMs !== undefined ? Result.requeueAfter(plan.requeueAfterMs) : Result.done();
  }

  /** spec.ttlSecondsAfterFinished: delete the ended WorkflowRun (its children go with it, by owner). */
  private async expire(w: WorkflowRun): Promise<Result> {
    const ttl = w.spec.ttlSecondsAfterFinished;
    const ended = Date.parse(w.status?.completionTime ?? "");
    if (ttl === undefined || Number.isNaN(ended)) return Result.done();
    const due = ended + ttl * 1000 - this.d.clock.now();
    if (due > 0) return Result.requeueAfter(due);
    try {
      await this.d.client.delete(path(WorkflowRunResource, w.metadata.namespace, w.metadata.name), {
        apiVersion: "v1",
        kind: "DeleteOptions",
        propagationPolicy: "Background",
        preconditions: { uid: w.metadata.uid },
      });
      this.d.log.info(
        { workflowRun: `${w.metadata.namespace}/${w.metadata.name}` },
        "ended ttlSecondsAfterFinished ago: deleted",
      );
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
    return Result.done();
  }

  /**
   * A child the status recorded but the informer does not show (and this process did not just
   * create) would be reported deleted — for good. Before that verdict, ask the apiserver: an
   * informer briefly behind (a relist under load) must not fail a job. Found ones are added.
   */
  private async confirmMissing(
    w: WorkflowRun,
    seen: {
      runs: Map<string, Run>;
      workspaces: Map<string, PersistentWorkspace>;
      children: Map<string, WorkflowRun>;
    },
    expected: (name: string) => boolean,
  ): Promise<void> {
    const ns = w.metadata.namespace ?? "";
    const checks: Promise<void>[] = [];
    const check = <T>(name: string | undefined, into: Map<string, T>, res: Parameters<typeof path>[0]) => {
      if (!name || into.has(name) || expected(name)) return;
      checks.push(
        this.d.client.get<T>(path(res, ns, name)).then(
          (obj) => void into.set(name, obj),
          (e) => {
            if (!isNotFound(e)) throw e;
          },
        ),
      );
    };
    for (const job of Object.values(w.status?.jobs ?? {})) {
      if (job.phase !== "Running") continue;
      check(job.workspace, seen.workspaces, WorkspaceResource);
      check(job.workflowRun, seen.children, WorkflowRunResource);
      for (const st of job.steps ?? [])
        if (st.phase === "Pending" || st.phase === "Running") check(st.run, seen.runs, RunResource);
    }
    await Promise.all(checks);
  }

  /** Validation and the frozen definitions, before any child exists. */
  private async start(w: WorkflowRun): Promise<Result> {
    const ns = w.metadata.namespace ?? "";
    const depth = Number(w.metadata.annotations?.[WorkflowAnnotations.depth] ?? "0") || 0;
    const now = new Date(this.d.clock.now()).toISOString();
    const fail = (reason: WorkflowReason, message: string): WorkflowRunStatus => ({
      phase: WorkflowPhase.Failed,
      reason,
      message: message.slice(0, 4096),
      depth,
      startTime: now,
      completionTime: now,
      definitions: {},
      conditions: [
        {
          type: "Finished",
          status: "True",
          reason,
          message: message.slice(0, 4096),
          lastTransitionTime: now,
        },
      ],
    });
    let status: WorkflowRunStatus;
    const local = validateWorkflowRunSpec(w.spec);
    if (local.length) status = fail(WorkflowReason.InvalidWorkflow, issuesText(local));
    else {
      const fetch =
        <T>(res: typeof WorkflowResource | typeof ActionResource) =>
        async (name: string): Promise<T | undefined> => {
          try {
            return (await this.d.client.get<{ spec: T }>(path(res, ns, name))).spec;
          } catch (e) {
            if (isNotFound(e)) return undefined;
            throw e;
          }
        };
      const resolved = await resolveDefinitions(
        w.spec.jobs,
        w.spec.definitions ?? {},
        fetch<WorkflowSpec>(WorkflowResource),
        fetch<ActionSpec>(ActionResource),
        depth,
      );
      if ("reason" in resolved) status = fail(WorkflowReason[resolved.reason], resolved.message);
      else {
        const withDefs = validateWorkflowRunSpec(w.spec, resolved.definitions);
        status = withDefs.length
          ? fail(WorkflowReason.InvalidWorkflow, issuesText(withDefs))
          : {
              phase: WorkflowPhase.Running,
              message: "started",
              depth,
              startTime: now,
              definitions: resolved.definitions,
              jobs: {},
            };
      }
    }
    try {
      await this.writeStatus(w, status);
    } catch (e) {
      return resultOfWriteError(e);
    }
    if (status.phase === WorkflowPhase.Failed) {
      this.finished.inc({ phase: WorkflowPhase.Failed });
      this.d.log.warn(
        { workflowRun: `${ns}/${w.metadata.name}`, reason: status.reason },
        status.message ?? "",
      );
    }
    return Result.done();
  }

  private async writeStatus(w: WorkflowRun, status: WorkflowRunStatus): Promise<void> {
    await this.d.client.patch(
      `${path(WorkflowRunResource, w.metadata.namespace, w.metadata.name)}/status`,
      [
        { op: "test", path: "/metadata/resourceVersion", value: w.metadata.resourceVersion },
        { op: "add", path: "/status", value: status },
      ],
      "json",
    );
  }

  private async create(c: Create): Promise<void> {
    const ns = c.obj.metadata.namespace ?? "";
    const res =
      c.kind === "Run" ? RunResource : c.kind === "WorkflowRun" ? WorkflowRunResource : WorkspaceResource;
    try {
      await this.d.client.create(path(res, ns), c.obj);
      this.created.inc({ kind: c.kind });
    } catch (e) {
      // Made by an earlier attempt whose status write did not land: the same child, by name.
      if (!(e instanceof KubeError && e.code === 409)) throw e;
    }
    this.expectations.set(`${ns}/${c.obj.metadata.name}`, this.d.clock.now());
  }

  private async cancel(ns: string, kind: "Run" | "WorkflowRun", name: string): Promise<void> {
    const res = kind === "Run" ? RunResource : WorkflowRunResource;
    try {
      await this.d.client.patch(
        path(res, ns, name),
        { spec: { termination: { mode: "Immediate" } } },
        "merge",
      );
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  private async deleteWorkspace(ns: string, name: string): Promise<void> {
    try {
      await this.d.client.delete(path(WorkspaceResource, ns, name));
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }
}

function issuesText(issues: { path: string; message: string }[]): string {
  const shown = issues.slice(0, 8).map((i) => `${i.path}: ${i.message}`);
  if (issues.length > 8) shown.push(`… ${issues.length - 8} more`);
  return shown.join("; ");
}
