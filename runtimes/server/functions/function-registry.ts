/**
 * FunctionRegistry holds the registrations of this server, one per run_uid, fenced by attempt:
 * the same attempt again is the existing registration, an older one is refused, a newer one
 * cancels the older registration and registers anew. Ended registrations stay visible for
 * `retainFinishedMs` (at most `retainMaxFinished` of them, oldest dropped first).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import {
  FunctionEndReason,
  type RegisterRequest,
} from "../../../api/gen/kruntimes/runtime/v1/function_pb.ts";
import { RuntimeServerError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { makeDir } from "../make-dir.ts";
import type { ServerOptions } from "../options.ts";
import { toFunctionSpec } from "./function-spec.ts";
import { Registration } from "./registration.ts";
import type { FunctionAdapter } from "./worker.ts";

export interface FunctionRegistryDeps {
  functions: FunctionAdapter;
  logger: Logger;
  invoked(result: string, durationMs: number): void;
}

export class FunctionRegistry {
  private readonly registrations = new Map<string, Registration>();
  /** Ended registrations in the order they ended, for retention. */
  private readonly endedOrder: Registration[] = [];
  /** Workers' private sockets: short paths (a Unix socket path has at most 107 bytes). */
  private readonly socketDir: string;
  private sockets = 0;

  constructor(
    private readonly options: ServerOptions,
    private readonly deps: FunctionRegistryDeps,
  ) {
    this.socketDir = join(options.stateDir, "fw");
  }

  /** Registers, or returns the existing registration of the same attempt; waits until loading is over. */
  async register(req: RegisterRequest): Promise<{ registration: Registration; created: boolean }> {
    const spec = toFunctionSpec(req, this.options);
    const existing = this.registrations.get(req.runUid);
    if (existing !== undefined) {
      if (req.attempt === existing.attempt) {
        await existing.loaded;
        return { registration: existing, created: false };
      }
      if (req.attempt < existing.attempt) throw stale(req.attempt, existing.attempt);
      await existing.unregister(false, 0, FunctionEndReason.CANCELLED);
      // Another Register may have raced in while the old one ended.
      const now = this.registrations.get(req.runUid);
      if (now !== existing && now !== undefined) return this.register(req);
      this.forget(existing);
    }
    const registration = new Registration(spec, {
      functions: this.deps.functions,
      interpreter: this.options.interpreter,
      logger: this.deps.logger,
      socketPath: () => {
        if (this.sockets === 0) makeDir(this.socketDir);
        return join(this.socketDir, `${++this.sockets}.sock`);
      },
      invoked: this.deps.invoked,
      ended: (r) => this.onEnded(r),
    });
    this.registrations.set(req.runUid, registration);
    await registration.loaded;
    return { registration, created: true };
  }

  get(runUid: string): Registration {
    const registration = this.registrations.get(runUid);
    if (registration === undefined)
      throw new RuntimeServerError("not_found", `no function registration for run ${runUid}`);
    return registration;
  }

  find(runUid: string): Registration | undefined {
    return this.registrations.get(runUid);
  }

  list(): Registration[] {
    return [...this.registrations.values()];
  }

  /** Registrations not ended (READY, REGISTERING, DRAINING). */
  get active(): number {
    let n = 0;
    for (const r of this.registrations.values()) if (!r.terminal) n++;
    return n;
  }

  /** The server drains: every registration drains (DRAINED) within `ms`. */
  async drainAll(ms: number): Promise<void> {
    await Promise.all(this.list().map((r) => r.unregister(true, ms, FunctionEndReason.DRAINED)));
  }

  /** Stops every worker at once (server close). */
  close(): void {
    for (const r of this.registrations.values()) void r.unregister(false, 0, FunctionEndReason.CANCELLED);
  }

  private onEnded(registration: Registration): void {
    this.endedOrder.push(registration);
    setTimeout(() => this.forget(registration), this.options.retainFinishedMs).unref?.();
    while (this.endedOrder.length > this.options.retainMaxFinished) this.forget(this.endedOrder[0]!);
  }

  private forget(registration: Registration): void {
    const at = this.endedOrder.indexOf(registration);
    if (at !== -1) this.endedOrder.splice(at, 1);
    if (this.registrations.get(registration.spec.runUid) !== registration) return;
    this.registrations.delete(registration.spec.runUid);
    if (this.options.removeWorkdirs && registration.spec.defaultCwd) {
      rmSync(registration.spec.cwd, { recursive: true, force: true });
    }
  }
}

export function stale(attempt: number, registered: number): RuntimeServerError {
  return new RuntimeServerError(
    "failed_precondition",
    `attempt ${attempt} is older than the registered attempt ${registered}`,
  );
}
