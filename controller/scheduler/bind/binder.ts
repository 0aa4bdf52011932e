/**
 * Bind: one fenced JSON patch of the Run's status subresource — the fence tests the phase and
 * attempt the cycle decided on, the write replaces the status with phase Scheduled, the
 * assignment and the timing. Exactly one binder can win a Run's attempt.
 */
import { type Run, RunResource } from "@kruntimes/api";
import { classifyWriteError, type KubeClient, path, type WriteFailure } from "@kruntimes/kube";
import { fenceOps, replaceStatus } from "../../status/json-patch.ts";
import { type BindTarget, boundStatus } from "../../status/run-status.ts";
import type { Clock } from "../../util/clock.ts";
import { nowMicros } from "../../util/clock.ts";

export type BindOutcome = { kind: "bound" } | { kind: WriteFailure; error: unknown };

export interface Binder {
  bind(run: Run, to: BindTarget, attempt: number): Promise<BindOutcome>;
  /** A fresh read of the Run (to settle an ambiguous bind); undefined when it is gone. */
  read(namespace: string, name: string): Promise<Run | undefined>;
}

export class ApiBinder implements Binder {
  constructor(
    private readonly client: KubeClient,
    private readonly clock: Clock,
  ) {}

  async bind(run: Run, to: BindTarget, attempt: number): Promise<BindOutcome> {
    const status = boundStatus(run, to, attempt, nowMicros(), this.clock.now());
    const ops = replaceStatus(fenceOps(run.status), status);
    try {
      await this.client.patch(
        path(RunResource, run.metadata.namespace, run.metadata.name, "status"),
        ops,
        "json",
      );
      return { kind: "bound" };
    } catch (e) {
      return { kind: classifyWriteError(e), error: e };
    }
  }

  async read(namespace: string, name: string): Promise<Run | undefined> {
    try {
      return await this.client.get<Run>(path(RunResource, namespace, name));
    } catch (e) {
      if (classifyWriteError(e) === "gone") return undefined;
      throw e;
    }
  }
}
