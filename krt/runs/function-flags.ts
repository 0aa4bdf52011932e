/**
 * `krt run --function` flags → `spec.mode.function`, checked against the bounds the CRD enforces
 * (FunctionLimits), so a bad value is refused by the CLI with the flag's name.
 */
import { FunctionLimits, type FunctionMode, isDuration, parseApiDuration } from "@kruntimes/api";
import { CliError } from "../errors.ts";

export interface FunctionFlags {
  handler?: string;
  concurrency?: string;
  idleTimeout?: string;
  invocationTimeout?: string;
  maxRequestBytes?: string;
  maxResponseBytes?: string;
}

const FLAG_NAMES: Record<keyof FunctionFlags, string> = {
  handler: "--handler",
  concurrency: "--concurrency",
  idleTimeout: "--idle-timeout",
  invocationTimeout: "--invocation-timeout",
  maxRequestBytes: "--max-request-bytes",
  maxResponseBytes: "--max-response-bytes",
};

/** The function flags that were given, by name (for "add --function"). */
export function functionFlagsGiven(f: FunctionFlags): string[] {
  return (Object.keys(FLAG_NAMES) as (keyof FunctionFlags)[])
    .filter((k) => f[k] !== undefined)
    .map((k) => FLAG_NAMES[k]);
}

const BYTE_UNITS: Record<string, number> = { "": 1, k: 1e3, M: 1e6, Ki: 1024, Mi: 1024 ** 2 };

/** `1048576`, `512Ki`, `1Mi`, `64k` → bytes. */
export function parseByteSize(text: string): number | undefined {
  const m = /^(\d+)(k|M|Ki|Mi)?$/.exec(text.trim());
  return m ? Number(m[1]) * (BYTE_UNITS[m[2] ?? ""] as number) : undefined;
}

function bytes(flag: string, text: string, max: number): number {
  const n = parseByteSize(text);
  if (n === undefined || n < 1 || n > max)
    throw CliError.usage(
      `${flag} "${text}" must be a byte size from 1 to ${max} (${max / 1024 ** 2}Mi), e.g. 65536, 512Ki, 4Mi`,
    );
  return n;
}

const HANDLER = /^[A-Za-z_$][A-Za-z0-9_$.]*$/;

export function functionMode(f: FunctionFlags): FunctionMode {
  const mode: FunctionMode = {};
  if (f.handler !== undefined) {
    if (!HANDLER.test(f.handler))
      throw CliError.usage(`--handler "${f.handler}" is not a function name`, "e.g. --handler handler");
    mode.handler = f.handler;
  }
  if (f.concurrency !== undefined) {
    const n = Number(f.concurrency);
    if (!/^[0-9]+$/.test(f.concurrency) || n < 1 || n > FunctionLimits.maxConcurrency)
      throw CliError.usage(
        `--concurrency "${f.concurrency}" must be a whole number from 1 to ${FunctionLimits.maxConcurrency}`,
      );
    mode.concurrency = n;
  }
  if (f.idleTimeout !== undefined) {
    if (!isDuration(f.idleTimeout))
      throw CliError.usage(`--idle-timeout "${f.idleTimeout}" is not a duration`, "e.g. --idle-timeout 10m");
    mode.idleTimeout = f.idleTimeout;
  }
  if (f.invocationTimeout !== undefined) {
    const ms = parseApiDuration(f.invocationTimeout);
    if (ms === undefined || ms > FunctionLimits.maxInvocationTimeoutMs)
      throw CliError.usage(
        `--invocation-timeout "${f.invocationTimeout}" must be a duration of at most ${FunctionLimits.maxInvocationTimeoutMs / 60_000}m`,
        "e.g. --invocation-timeout 30s",
      );
    mode.invocationTimeout = f.invocationTimeout;
  }
  if (f.maxRequestBytes !== undefined)
    mode.maxRequestBytes = bytes("--max-request-bytes", f.maxRequestBytes, FunctionLimits.maxMaxRequestBytes);
  if (f.maxResponseBytes !== undefined)
    mode.maxResponseBytes = bytes(
      "--max-response-bytes",
      f.maxResponseBytes,
      FunctionLimits.maxMaxResponseBytes,
    );
  return mode;
}
