/**
 * Runs `bun controller/main.ts` as a real separate process for integration tests, so a test can
 * SIGKILL it mid-flight and start another. Defaults suit the local cluster: the runtimed sidecar
 * is the heartbeat-only stand-in, leader election is fast, Runs may stay Scheduled for long.
 */
import { closeSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseOptions } from "../../options.ts";

const REPO = resolve(import.meta.dir, "../../..");

export const TEST_RUNTIMED_FLAGS = [
  "--runtimed-image=ghcr.io/kruntimes/runtimed:test",
  "--runtimed-command=bun,controller/testing/heartbeat.ts",
];

/**
 * The waiting-reason delays as installed, for benchmarks: startController shortens them (tests wait
 * for the reasons), but their writes are part of what a burst costs. Pass in `flags` (later wins).
 */
export function installedWaitingReasonFlags(): string[] {
  const d = parseOptions([], {});
  return [
    `--waiting-reason-delay=${d.waitingReasonDelayMs}ms`,
    `--capacity-wait-reason-delay=${d.capacityWaitReasonDelayMs}ms`,
  ];
}

export interface ControllerProcess {
  readonly pid: number;
  readonly logFile: string;
  readonly exited: Promise<number>;
  log(): string;
  /** Resolves when the log says `line`. */
  waitFor(line: string, timeoutMs?: number): Promise<void>;
  metricsPort(): Promise<number>;
  kill(signal?: NodeJS.Signals): void;
}

let counter = 0;

export function startController(o: {
  namespace: string;
  kubeconfig: string;
  flags?: string[];
  /**
   * `stand-in` (default): the heartbeat-only stand-in, Runs stay Scheduled until the test acts.
   * `real`: the controller's default runtimed image, which the local node agent maps to
   * `bun runtimed/main.ts` — Runs execute for real.
   */
  runtimed?: "stand-in" | "real";
}): ControllerProcess {
  const logFile = join(tmpdir(), `krt-controller-${o.namespace}-${process.pid}-${counter++}.log`);
  const fd = openSync(logFile, "w");
  const flags = [
    `--namespace=${o.namespace}`,
    `--leader-election-namespace=${o.namespace}`,
    "--metrics-port=0",
    "--metrics-host=127.0.0.1",
    ...(o.runtimed === "real" ? [] : TEST_RUNTIMED_FLAGS),
    "--leader-lease-duration=4s",
    "--leader-renew-deadline=3s",
    "--leader-retry-period=500ms",
    "--waiting-reason-delay=200ms",
    "--capacity-wait-reason-delay=200ms",
    "--scheduled-start-timeout=10m",
    ...(o.flags ?? []),
  ];
  const child = Bun.spawn(["bun", "controller/main.ts", ...flags], {
    cwd: REPO,
    env: { ...process.env, KUBECONFIG: o.kubeconfig },
    stdout: fd,
    stderr: fd,
  });
  closeSync(fd);
  const log = () => readFileSync(logFile, "utf8");
  return {
    pid: child.pid,
    logFile,
    exited: child.exited,
    log,
    async waitFor(line: string, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (log().includes(line)) return;
        if (child.exitCode !== null)
          throw new Error(`controller exited (${child.exitCode}):\n${log().slice(-3000)}`);
        await Bun.sleep(50);
      }
      throw new Error(`controller did not log "${line}" within ${timeoutMs}ms:\n${log().slice(-3000)}`);
    },
    async metricsPort() {
      await this.waitFor('"metricsPort"');
      const m = /"metricsPort":(\d+)/.exec(log());
      return Number(m?.[1]);
    },
    kill(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode === null) child.kill(signal);
    },
  };
}
