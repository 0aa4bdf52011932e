/**
 * A child process in its own session and process group that dies with its parent
 * (`setpriv --pdeathsig KILL`), so a crashed supervisor or test never leaves it behind.
 */
import { closeSync, openSync } from "node:fs";
import type { Subprocess } from "bun";

export interface ProcessSpec {
  name: string;
  argv: string[];
  env?: Record<string, string>;
  cwd?: string;
  logFile: string;
}

export class ManagedProcess {
  private proc?: Subprocess;
  private exitWaiters: ((code: number | null) => void)[] = [];
  exitCode: number | null = null;

  constructor(readonly spec: ProcessSpec) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }
  get running(): boolean {
    return this.proc !== undefined && this.exitCode === null;
  }

  start(): void {
    const fd = openSync(this.spec.logFile, "a");
    this.exitCode = null;
    this.proc = Bun.spawn(["setpriv", "--pdeathsig", "KILL", "setsid", ...this.spec.argv], {
      cwd: this.spec.cwd,
      env: { ...process.env, ...this.spec.env },
      stdin: "ignore",
      stdout: fd,
      stderr: fd,
      onExit: (_p, code, signal) => {
        this.exitCode = code ?? (signal ? 128 : -1);
        for (const w of this.exitWaiters.splice(0)) w(this.exitCode);
      },
    });
    closeSync(fd);
  }

  waitExit(): Promise<number | null> {
    if (!this.running) return Promise.resolve(this.exitCode);
    return new Promise((r) => this.exitWaiters.push(r));
  }

  /** SIGTERM to the whole group, SIGKILL after the grace period. */
  async stop(graceMs = 5000): Promise<void> {
    const pid = this.proc?.pid;
    if (!pid || !this.running) return;
    signalGroup(pid, "SIGTERM");
    const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
    await this.waitExit();
    clearTimeout(timer);
    signalGroup(pid, "SIGKILL"); // stragglers of the group
  }
}

export function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}
