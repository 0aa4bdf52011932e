/**
 * One container attempt as a host process: its own session and process group (`detached`), a
 * parent-death signal so it dies with the agent (`setpriv --pdeathsig KILL`), private mount and
 * UTS namespaces (`unshare`), then the wrapper script's binds and `exec` of the command. The
 * chain never forks, so the spawned pid is the container's pid and the group id.
 * stdout/stderr go to the attempt's CRI log file.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import type { Subprocess } from "bun";
import { CriLogWriter } from "../logs/cri-log-writer.ts";
import { type WrapperSpec, wrapperScript } from "./mount-plan.ts";
import { groupAlive, type ProcessRegistry, signalGroup } from "./process-registry.ts";

export interface HostTools {
  setpriv: string;
  unshare: string;
  sh: string;
}

export function findHostTools(path: string): HostTools {
  const find = (name: string) => {
    const p = Bun.which(name, { PATH: path });
    if (!p) throw new Error(`${name} (util-linux/sh) is not on PATH; the node agent needs it`);
    return p;
  };
  return { setpriv: find("setpriv"), unshare: find("unshare"), sh: find("sh") };
}

export interface ProcessExit {
  exitCode: number;
  /** Signal number when the process was killed by one. */
  signal?: number;
  /** Set when the wrapper failed before the command ran (kubelet's StartError). */
  startError?: string;
  finishedAt: Date;
}

const SIGNALS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGTERM: 15,
};

export interface LaunchSpec {
  argv: string[];
  env: Record<string, string>;
  wrapper: WrapperSpec;
  logFile: string;
  /** Registry key parts, for killing leftovers after an agent crash. */
  podKey: string;
  container: string;
}

export class ContainerProcess {
  readonly startedAt = new Date();
  readonly exited: Promise<ProcessExit>;
  private readonly proc: Subprocess<"ignore", "pipe", "pipe">;
  private readonly log: CriLogWriter;
  private result: ProcessExit | undefined;

  constructor(
    spec: LaunchSpec,
    tools: HostTools,
    private readonly registry: ProcessRegistry,
  ) {
    rmSync(spec.wrapper.startErrorFile, { force: true });
    this.log = new CriLogWriter(spec.logFile);
    const argv = [
      tools.setpriv,
      "--pdeathsig",
      "KILL",
      tools.unshare,
      "--mount",
      "--uts",
      "--propagation",
      "private",
      tools.sh,
      "-c",
      wrapperScript(spec.wrapper),
      "krt-container",
      ...spec.argv,
    ];
    const proc = Bun.spawn(argv, {
      env: spec.env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    });
    this.proc = proc;
    registry.record(proc.pid, spec.podKey, spec.container);
    const pumps = Promise.all([this.pump("stdout", proc.stdout), this.pump("stderr", proc.stderr)]);
    this.exited = this.watch(proc, pumps, spec.wrapper.startErrorFile);
  }

  private async watch(
    proc: Subprocess<"ignore", "pipe", "pipe">,
    pumps: Promise<unknown>,
    startErrorFile: string,
  ) {
    await proc.exited;
    // Output still buffered in the pipes belongs to this attempt; the group's stragglers may hold
    // the pipes open, so wait for them only briefly.
    await Promise.race([pumps, Bun.sleep(500)]);
    this.log.close();
    this.registry.forget(proc.pid);
    const sig = proc.signalCode;
    const signal = typeof sig === "number" ? sig : sig ? (SIGNALS[sig] ?? 0) : undefined;
    let startError: string | undefined;
    if (proc.exitCode === 128 && existsSync(startErrorFile))
      startError = readFileSync(startErrorFile, "utf8").trim();
    this.result = {
      exitCode: signal ? 128 + signal : (proc.exitCode ?? 0),
      signal,
      startError,
      finishedAt: new Date(),
    };
    return this.result;
  }

  get pid(): number {
    return this.proc.pid;
  }
  get logFile(): string {
    return this.log.file;
  }
  get running(): boolean {
    return this.result === undefined;
  }
  get exit(): ProcessExit | undefined {
    return this.result;
  }

  /** Signals the whole process group (a shell's children too). */
  signal(sig: NodeJS.Signals): void {
    if (!signalGroup(this.proc.pid, sig) && this.running) this.proc.kill(sig);
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the leader exited and the group is gone. */
  async stop(graceMs: number): Promise<ProcessExit> {
    if (this.running) this.signal("SIGTERM");
    const timer = setTimeout(() => this.signal("SIGKILL"), Math.max(0, graceMs));
    const exit = await this.exited;
    clearTimeout(timer);
    if (groupAlive(this.proc.pid)) signalGroup(this.proc.pid, "SIGKILL");
    return exit;
  }

  private async pump(stream: "stdout" | "stderr", body: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const chunk of body) this.log.write(stream, chunk);
    } catch {
      // The pipe broke with the process; what was read is in the log.
    }
    this.log.end(stream);
  }
}
