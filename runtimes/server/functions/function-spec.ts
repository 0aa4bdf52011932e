/**
 * Turns a RegisterRequest into a FunctionSpec: the effective limits (zero fields take the
 * defaults of api/src/constants.ts FunctionLimits, values above the maxima are INVALID_ARGUMENT),
 * the working directory (default `<run_uid>/fn`), and the workers' environment. A malformed env is
 * the Run author's mistake: it becomes `loadError`, so the registration ends FAILED with it.
 */
import { join } from "node:path";
import type { RegisterRequest } from "../../../api/gen/kruntimes/runtime/v1/function_pb.ts";
import { FunctionLimits } from "../../../api/src/constants.ts";
import { RuntimeServerError } from "../errors.ts";
import type { ServerOptions } from "../options.ts";
import { envProblem, uidPattern, workingDir } from "../task-request.ts";

export interface EffectiveLimits {
  concurrency: number;
  queueLimit: number;
  maxRequestBytes: number;
  maxResponseBytes: number;
  invocationTimeoutMs: number;
  /** 0 = never. */
  idleTimeoutMs: number;
}

export interface FunctionSpec {
  runUid: string;
  runName: string;
  attempt: number;
  source: string;
  handler: string;
  limits: EffectiveLimits;
  cwd: string;
  /** The working directory is the default one (removed when the registration is dropped). */
  defaultCwd: boolean;
  env: Record<string, string>;
  /** Private directory of this registration (source file, bash worker files). */
  stateDir: string;
  /** Set when the registration must end FAILED without starting a worker. */
  loadError: string;
}

function invalid(message: string): RuntimeServerError {
  return new RuntimeServerError("invalid_argument", message);
}

function limit(name: string, requested: number, fallback: number, max: number): number {
  if (requested === 0) return fallback;
  if (requested > max) throw invalid(`${name} is ${requested}, this server accepts at most ${max}`);
  return requested;
}

export function effectiveLimits(req: RegisterRequest): EffectiveLimits {
  const L = FunctionLimits;
  return {
    concurrency: limit("concurrency", req.concurrency, L.defaultConcurrency, L.maxConcurrency),
    queueLimit: limit("queue_limit", req.queueLimit, L.defaultQueueLimit, L.maxQueueLimit),
    maxRequestBytes: limit(
      "max_request_bytes",
      req.maxRequestBytes,
      L.defaultMaxRequestBytes,
      L.maxMaxRequestBytes,
    ),
    maxResponseBytes: limit(
      "max_response_bytes",
      req.maxResponseBytes,
      L.defaultMaxResponseBytes,
      L.maxMaxResponseBytes,
    ),
    invocationTimeoutMs: limit(
      "invocation_timeout_ms",
      req.invocationTimeoutMs,
      L.defaultInvocationTimeoutMs,
      L.maxInvocationTimeoutMs,
    ),
    idleTimeoutMs: req.idleTimeoutMs,
  };
}

export function checkRunUid(runUid: string): void {
  if (!uidPattern.test(runUid) || runUid === "." || runUid === "..") {
    throw invalid(
      `run_uid must match ${uidPattern.source} and not be . or .., got ${JSON.stringify(runUid)}`,
    );
  }
}

export function toFunctionSpec(req: RegisterRequest, options: ServerOptions): FunctionSpec {
  checkRunUid(req.runUid);
  if (req.attempt < 1) throw invalid("attempt must be >= 1");
  if (req.handler === "") throw invalid("handler is empty");
  const limits = effectiveLimits(req);
  const { cwd } = workingDir(
    options.workspaceRoot,
    req.workingDir === "" ? join(req.runUid, "fn") : req.workingDir,
    req.runUid,
    req.attempt,
  );
  const defaultCwd = req.workingDir === "";
  const env: Record<string, string> = {
    ...options.baseEnv,
    ...req.env,
    KRUNTIME_RUN_UID: req.runUid,
    KRUNTIME_RUN_NAME: req.runName,
    KRUNTIME_ATTEMPT: String(req.attempt),
    KRUNTIME_WORKDIR: cwd,
  };
  return {
    runUid: req.runUid,
    runName: req.runName,
    attempt: req.attempt,
    source: req.source,
    handler: req.handler,
    limits,
    cwd,
    defaultCwd,
    env,
    // Unique per registration: a re-registration of the same attempt never shares the files of
    // the one before it (whose directory is removed once its workers are gone).
    stateDir: join(
      options.stateDir,
      "functions",
      `${req.runUid}.${req.attempt}.${crypto.randomUUID().slice(0, 8)}`,
    ),
    loadError: envProblem(req.env),
  };
}
