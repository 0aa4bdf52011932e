/**
 * The gateway as a real process (`bun gateway/main.ts`), for the cluster suite and the cluster
 * benchmark: started with the given flags, its ports read from its "gateway started" log line
 * (so the log level must be info or lower), returned once /readyz answers 200.
 */
import { closeSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const REPO = resolve(import.meta.dir, "../..");

export interface GatewayProc {
  ports: { http: number; grpc: number; https: number; metrics: number };
  pid: number;
  logFile: string;
  log(): string;
  kill(signal?: NodeJS.Signals): void;
  exited: Promise<number>;
}

/** Polls `f` until it returns a value; `f` throwing ends the wait with its error. */
async function until<T>(what: string, f: () => Promise<T | undefined | false>, ms: number): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(100);
  }
}

export async function startGatewayProcess(
  flags: string[],
  env: Record<string, string> = {},
): Promise<GatewayProc> {
  const logFile = join(tmpdir(), `krt-gateway-${process.pid}-${Math.random().toString(36).slice(2)}.log`);
  const fd = openSync(logFile, "w");
  const child = Bun.spawn(["bun", "gateway/main.ts", ...flags], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdout: fd,
    stderr: fd,
  });
  closeSync(fd);
  const log = () => readFileSync(logFile, "utf8");
  const line = await until(
    "gateway started",
    async () => {
      if (child.exitCode !== null) throw new Error(`gateway exited ${child.exitCode}:\n${log()}`);
      return log()
        .split("\n")
        .find((l) => l.includes('"msg":"gateway started"'));
    },
    30_000,
  ).catch((e) => {
    child.kill();
    throw child.exitCode !== null ? new Error(`gateway exited ${child.exitCode}:\n${log()}`) : e;
  });
  const ports = (JSON.parse(line) as { ports: GatewayProc["ports"] }).ports;
  await until(
    "gateway ready",
    async () => (await fetch(`http://127.0.0.1:${ports.metrics}/readyz`).catch(() => undefined))?.ok,
    30_000,
  );
  return {
    ports,
    pid: child.pid,
    logFile,
    log,
    kill: (s = "SIGTERM") => child.kill(s),
    exited: child.exited,
  };
}
