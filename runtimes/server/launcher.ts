/**
 * Launcher starts a Run's process: on a warm interpreter when one is available and the Run's
 * environment allows it, otherwise with a cold spawn. Both give the Run its own process group
 * (setsid), stdin on /dev/null, and stdout/stderr pipes.
 */
import type { LanguageAdapter, LaunchSpec } from "./adapter.ts";
import { exitStatus, type RunProcess } from "./run-process.ts";
import type { WarmPool } from "./warm/warm-pool.ts";
import { WarmProcess } from "./warm/warm-process.ts";

export interface LauncherConfig {
  adapter: LanguageAdapter;
  interpreter: string;
  baseEnv: Record<string, string>;
  /** Where warm interpreters wait (any existing directory). */
  idleCwd: string;
}

export class Launcher {
  pool: WarmPool | undefined;

  constructor(private readonly config: LauncherConfig) {}

  /** Spawns an idle warm interpreter (used by the pool). */
  spawnWarm = (): WarmProcess => {
    const { adapter, interpreter, baseEnv, idleCwd } = this.config;
    const proc = Bun.spawn({
      cmd: adapter.warmArgv(interpreter),
      cwd: idleCwd,
      env: baseEnv,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    return new WarmProcess(proc);
  };

  launch(spec: LaunchSpec): RunProcess {
    const { adapter, baseEnv } = this.config;
    if (this.pool !== undefined && adapter.warmEligible(spec.env, baseEnv)) {
      const warm = this.pool.take();
      if (warm !== undefined) {
        try {
          return warm.dispatch(adapter.warmJob(spec, baseEnv));
        } catch {
          // It died between the pool's check and the hand-over: the Run starts cold instead.
          warm.kill();
        }
      }
    }
    return this.cold(spec);
  }

  private cold(spec: LaunchSpec): RunProcess {
    const proc = Bun.spawn({
      cmd: this.config.adapter.coldArgv(this.config.interpreter, spec.plan),
      cwd: spec.cwd,
      env: spec.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    return {
      pid: proc.pid,
      warm: false,
      stdout: proc.stdout.getReader(),
      stderr: proc.stderr.getReader(),
      stdoutHead: Promise.resolve(new Uint8Array(0)),
      exited: exitStatus(proc),
    };
  }
}
