/**
 * Runtime Server options, parsed once at start into a typed, defaulted object that is passed
 * down; nothing else reads the environment. Every flag has an environment twin (`--socket` ↔
 * `KRT_SOCKET`, `--warm-pool` ↔ `KRT_WARM_POOL`); flags win. The controller sets `KRT_SOCKET` and
 * `KRT_WORKSPACE` in the runtime container; the twins are removed from the Runs' environment.
 */
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TaskLimitsInfo } from "../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";

export type Language = "bash" | "python";

/**
 * Defaults and maxima of the per-request limits: exactly the fields of the proto's
 * TaskLimitsInfo (which Info reports), so the two cannot drift. Defaults below.
 */
export type LimitOptions = Omit<TaskLimitsInfo, "$typeName" | "$unknown">;

export interface ServerOptions {
  /** Unix socket to listen on. Default /var/run/kruntimes/runtime.sock. */
  socketPath: string;
  /** Language adapter (`--runtime bash|python`). Default bash. */
  language: Language;
  /** Name reported by Info (a custom Runtime's name). Default: the language. */
  runtimeName: string;
  /** Interpreter binary. Default /bin/bash or /usr/bin/python3 by language. */
  interpreter: string;
  /** The shared workspace volume. Default /workspace. */
  workspace: string;
  /** Root of the per-Run working directories: `<workspace>/runs`. */
  workspaceRoot: string;
  /** Private files of the server (scripts, jobs, outputs files). Default $TMPDIR/kruntime-server.<pid>. */
  stateDir: string;
  /** Warm interpreters kept ready; 0 cold-starts every Run. Default 2. */
  warmPoolSize: number;
  /** Concurrent executions accepted. Default 64. */
  maxConcurrent: number;
  /** SIGTERM→SIGKILL grace when a request gives none. Default 10 s. */
  defaultGraceMs: number;
  /** On SIGTERM, how long running executions may go on before they are stopped. Default 25 s. */
  drainTimeoutMs: number;
  /** How long finished executions stay visible to Watch/List. Default 10 min. */
  retainFinishedMs: number;
  /** Finished executions retained at most; the oldest go first. Default 1024. */
  retainMaxFinished: number;
  /** Remove a Run's working directory when its finished execution is evicted. Default true. */
  removeWorkdirs: boolean;
  limits: LimitOptions;
  /** pino level. Default info. */
  logLevel: string;
  /** TCP port serving GET /metrics for a scraper; 0 = only on the socket. Default 0. */
  metricsPort: number;
  /** Environment every Run starts from: the server's own, minus the option twins above. */
  baseEnv: Record<string, string>;
}

const KiB = 1024;
const MiB = 1024 * KiB;

export const defaultLimits: LimitOptions = {
  defaultTailBytes: 16 * KiB,
  maxTailBytes: MiB,
  defaultOutputsMaxCount: 64,
  maxOutputsMaxCount: 1024,
  defaultOutputsMaxBytes: 64 * KiB,
  maxOutputsMaxBytes: MiB,
  defaultOutputValueMaxBytes: 4 * KiB,
  maxOutputValueMaxBytes: 64 * KiB,
};

const defaultInterpreters: Record<Language, string> = { bash: "/bin/bash", python: "/usr/bin/python3" };

type Kind = "string" | "int" | "bool";
const flags = {
  socket: "string",
  runtime: "string",
  "runtime-name": "string",
  interpreter: "string",
  workspace: "string",
  "state-dir": "string",
  "warm-pool": "int",
  "max-concurrent": "int",
  "default-grace-ms": "int",
  "drain-timeout-ms": "int",
  "retain-finished-ms": "int",
  "retain-max-finished": "int",
  "remove-workdirs": "bool",
  "default-tail-bytes": "int",
  "log-level": "string",
  "metrics-port": "int",
} as const satisfies Record<string, Kind>;
type Flag = keyof typeof flags;

export const ENV_PREFIX = "KRT_";

export class OptionsError extends Error {
  override name = "OptionsError";
  /** True for --help: the message is the usage, and asking for it is not an error. */
  constructor(
    message: string,
    readonly help = false,
  ) {
    super(message);
  }
}

export function envName(flag: string): string {
  return ENV_PREFIX + flag.toUpperCase().replaceAll("-", "_");
}

const optionEnvNames = new Set(Object.keys(flags).map(envName));

function isFlag(name: string): name is Flag {
  return Object.hasOwn(flags, name);
}

/** Collects raw values: environment first, then flags (`--name value`, `--name=value`, `--bool`). */
function collect(argv: readonly string[], env: Record<string, string | undefined>): Map<Flag, string> {
  const raw = new Map<Flag, string>();
  for (const flag of Object.keys(flags) as Flag[]) {
    const value = env[envName(flag)];
    if (value !== undefined && value !== "") raw.set(flag, value);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--help" || arg === "-h") throw new OptionsError(usage(), true);
    if (!arg.startsWith("--"))
      throw new OptionsError(`unexpected argument ${JSON.stringify(arg)}\n${usage()}`);
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (!isFlag(name)) throw new OptionsError(`unknown flag --${name}\n${usage()}`);
    if (eq !== -1) raw.set(name, arg.slice(eq + 1));
    else if (flags[name] === "bool") raw.set(name, "true");
    else {
      const value = argv[++i];
      if (value === undefined) throw new OptionsError(`--${name} needs a value`);
      raw.set(name, value);
    }
  }
  return raw;
}

function int(raw: Map<Flag, string>, flag: Flag, fallback: number, min = 0): number {
  const text = raw.get(flag);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min) {
    throw new OptionsError(
      `--${flag} (${envName(flag)}) must be an integer >= ${min}, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

function bool(raw: Map<Flag, string>, flag: Flag, fallback: boolean): boolean {
  const text = raw.get(flag);
  if (text === undefined) return fallback;
  if (text === "true" || text === "1") return true;
  if (text === "false" || text === "0") return false;
  throw new OptionsError(`--${flag} (${envName(flag)}) must be true or false, got ${JSON.stringify(text)}`);
}

export function parseOptions(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  pid = process.pid,
): ServerOptions {
  const raw = collect(argv, env);
  const language = raw.get("runtime") ?? "bash";
  if (language !== "bash" && language !== "python") {
    throw new OptionsError(`--runtime (KRT_RUNTIME) must be bash or python, got ${JSON.stringify(language)}`);
  }
  const limits = { ...defaultLimits };
  limits.defaultTailBytes = int(raw, "default-tail-bytes", limits.defaultTailBytes, 1);
  if (limits.defaultTailBytes > limits.maxTailBytes) {
    throw new OptionsError(`--default-tail-bytes must be <= ${limits.maxTailBytes}`);
  }
  const baseEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !optionEnvNames.has(key)) baseEnv[key] = value;
  }
  const workspace = resolve(raw.get("workspace") ?? "/workspace");
  return {
    socketPath: resolve(raw.get("socket") ?? "/var/run/kruntimes/runtime.sock"),
    language,
    runtimeName: raw.get("runtime-name") ?? language,
    interpreter: raw.get("interpreter") ?? defaultInterpreters[language],
    workspace,
    workspaceRoot: join(workspace, "runs"),
    stateDir: resolve(raw.get("state-dir") ?? join(env.TMPDIR || tmpdir(), `kruntime-server.${pid}`)),
    warmPoolSize: int(raw, "warm-pool", 2),
    maxConcurrent: int(raw, "max-concurrent", 64, 1),
    defaultGraceMs: int(raw, "default-grace-ms", 10_000),
    drainTimeoutMs: int(raw, "drain-timeout-ms", 25_000),
    retainFinishedMs: int(raw, "retain-finished-ms", 600_000),
    retainMaxFinished: int(raw, "retain-max-finished", 1024),
    removeWorkdirs: bool(raw, "remove-workdirs", true),
    limits,
    logLevel: raw.get("log-level") ?? "info",
    metricsPort: int(raw, "metrics-port", 0),
    baseEnv,
  };
}

export function usage(): string {
  const lines = [
    "usage: runtime-server [flags]",
    "",
    "flags (each also read from the environment variable on its right; flags win):",
  ];
  for (const [flag, kind] of Object.entries(flags)) {
    lines.push(`  --${flag}${kind === "bool" ? "" : ` <${kind}>`}`.padEnd(34) + envName(flag));
  }
  return lines.join("\n");
}
