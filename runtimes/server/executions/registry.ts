/**
 * ExecutionRegistry owns the executions of one server, keyed by (run uid, attempt): it refuses
 * duplicates and overload, and keeps finished executions for Watch/List until they expire
 * (retainFinishedMs) or are pushed out by newer ones (retainMaxFinished). Expiry removes the
 * execution's private files and, when configured, its default working directory.
 */
import { rmdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { TaskState } from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import { RuntimeServerError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { Execution, type ExecutionDeps, type ExecutionSpec } from "./execution.ts";

export interface RegistryConfig {
  maxConcurrent: number;
  retainFinishedMs: number;
  retainMaxFinished: number;
  removeWorkdirs: boolean;
}

export function executionKey(runUid: string, attempt: number): string {
  return `${runUid}/${attempt}`;
}

export class ExecutionRegistry {
  private executions = new Map<string, Execution>();
  /** Keys of finished executions, oldest first. */
  private finishedOrder: string[] = [];
  private expiry = new Map<string, ReturnType<typeof setTimeout>>();
  private active = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly config: RegistryConfig,
    private readonly deps: ExecutionDeps,
    private readonly logger: Logger,
  ) {}

  /** Executions not yet exited. */
  get running(): number {
    return this.active;
  }

  /** Creates an execution without starting it, so the caller can subscribe first. */
  create(spec: ExecutionSpec): Execution {
    const key = executionKey(spec.runUid, spec.attempt);
    if (this.executions.has(key)) {
      throw new RuntimeServerError(
        "already_exists",
        `execution ${key} already exists; use Watch to attach to it`,
      );
    }
    if (this.active >= this.config.maxConcurrent) {
      throw new RuntimeServerError(
        "resource_exhausted",
        `${this.active} executions are running, the limit is ${this.config.maxConcurrent}`,
      );
    }
    const execution = new Execution(spec, this.deps);
    this.executions.set(key, execution);
    this.active++;
    execution.done.then(() => this.finished(key));
    return execution;
  }

  get(runUid: string, attempt: number): Execution {
    const execution = this.executions.get(executionKey(runUid, attempt));
    if (execution === undefined) {
      throw new RuntimeServerError(
        "not_found",
        `no execution ${executionKey(runUid, attempt)} on this server`,
      );
    }
    return execution;
  }

  list(runUid: string): Execution[] {
    const all = [...this.executions.values()];
    return runUid === "" ? all : all.filter((execution) => execution.spec.runUid === runUid);
  }

  /** Resolves when no execution is running. */
  idle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  cancelAll(graceMs: number, message: string): void {
    for (const execution of this.executions.values()) {
      if (execution.state !== TaskState.EXITED) execution.cancel(graceMs, message);
    }
  }

  close(): void {
    for (const timer of this.expiry.values()) clearTimeout(timer);
    this.expiry.clear();
  }

  private finished(key: string): void {
    this.active--;
    if (this.active === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
    this.finishedOrder.push(key);
    const timer = setTimeout(() => this.evict(key), this.config.retainFinishedMs);
    timer.unref?.();
    this.expiry.set(key, timer);
    while (this.finishedOrder.length > this.config.retainMaxFinished) {
      const oldest = this.finishedOrder[0]!;
      this.evict(oldest);
    }
  }

  private evict(key: string): void {
    const execution = this.executions.get(key);
    clearTimeout(this.expiry.get(key));
    this.expiry.delete(key);
    const at = this.finishedOrder.indexOf(key);
    if (at !== -1) this.finishedOrder.splice(at, 1);
    if (execution === undefined) return;
    this.executions.delete(key);
    const { spec } = execution;
    try {
      rmSync(spec.stateDir, { recursive: true, force: true });
      if (this.config.removeWorkdirs && spec.defaultCwd) {
        rmSync(spec.cwd, { recursive: true, force: true });
        try {
          rmdirSync(dirname(spec.cwd)); // <root>/<uid>, once its last attempt is gone
        } catch {
          // not empty: other attempts remain
        }
      }
    } catch (error) {
      this.logger.warn({ err: error, key }, "cannot remove the files of an expired execution");
    }
  }
}
