/**
 * A Runtime Server under test, as a real process on a temporary socket and workspace. The
 * target says how to turn the suite's settings into a command line, so the same suite drives
 * `bun runtimes/server/main.ts`, the compiled binary, or another implementation of the contract.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { connectUnix, type RuntimeClients } from "../testing/client.ts";

/** Timeout for tests and hooks that start servers: starts are slow on a loaded 2-core machine. */
export const SERVER_TIMEOUT_MS = 30_000;

/** What a test asks of the server it starts. */
export interface ServerSettings {
  socket: string;
  workspace: string;
  /** Private directory the server may use (state files). */
  stateDir: string;
  warmPool: number;
  maxConcurrent: number;
  drainTimeoutMs: number;
  defaultGraceMs: number;
}

export interface ServerTarget {
  /** Display name ("bash", "python (compiled)"). */
  name: string;
  /** argv starting the server with these settings. */
  argv(settings: ServerSettings): string[];
}

export interface StartOptions extends Partial<Omit<ServerSettings, "socket" | "workspace" | "stateDir">> {
  /** The container's environment, added to the test process's own (KRT_* and SHLVL removed). */
  env?: Record<string, string>;
  /** Listen here instead of on a fresh path (to test a stale socket file). */
  socket?: string;
}

export class ServerProcess {
  readonly clients: RuntimeClients;
  /** The same clients with binary protobuf on the wire, as runtimed calls the server. */
  readonly binaryClients: RuntimeClients;

  private constructor(
    readonly dir: string,
    readonly settings: ServerSettings,
    readonly proc: Subprocess,
  ) {
    this.clients = connectUnix(settings.socket);
    this.binaryClients = connectUnix(settings.socket, { binary: true });
  }

  static async start(target: ServerTarget, options: StartOptions = {}): Promise<ServerProcess> {
    const dir = mkdtempSync(join(tmpdir(), "krt-rs-"));
    const settings: ServerSettings = {
      socket: options.socket ?? join(dir, "runtime.sock"),
      workspace: join(dir, "workspace"),
      stateDir: join(dir, "state"),
      warmPool: options.warmPool ?? 2,
      maxConcurrent: options.maxConcurrent ?? 64,
      drainTimeoutMs: options.drainTimeoutMs ?? 20_000,
      defaultGraceMs: options.defaultGraceMs ?? 5_000,
    };
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      // A container starts with neither the harness's KRT_* settings nor a shell level.
      if (value !== undefined && !key.startsWith("KRT_") && key !== "SHLVL") env[key] = value;
    }
    Object.assign(env, options.env);
    const proc = Bun.spawn({
      cmd: target.argv(settings),
      env,
      stdin: "ignore",
      stdout: Bun.file(join(dir, "server.out")),
      stderr: Bun.file(join(dir, "server.log")),
    });
    const server = new ServerProcess(dir, settings, proc);
    await server.waitHealthy(15_000);
    return server;
  }

  get workspaceRoot(): string {
    return join(this.settings.workspace, "runs");
  }

  log(): string {
    try {
      return readFileSync(join(this.dir, "server.log"), "utf8");
    } catch {
      return "";
    }
  }

  private async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) {
        throw new Error(
          `server exited (${this.proc.exitCode ?? this.proc.signalCode}) before serving:\n${this.log()}`,
        );
      }
      try {
        await this.clients.runtime.health({});
        return;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(`server not healthy after ${timeoutMs} ms: ${error}\n${this.log()}`);
      }
      await Bun.sleep(20);
    }
  }

  /** SIGTERM and wait for the exit (SIGKILL after `timeoutMs`); removes the temporary files. */
  async stop(timeoutMs = 15_000): Promise<number | null> {
    this.proc.kill("SIGTERM");
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), timeoutMs);
    await this.proc.exited;
    clearTimeout(timer);
    rmSync(this.dir, { recursive: true, force: true });
    return this.proc.exitCode;
  }
}
