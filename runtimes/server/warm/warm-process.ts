/**
 * WarmProcess is one pre-started interpreter waiting for its job. It becomes ready when it has
 * written its "R" byte; it may be handed a job before that (the job waits in the pipe), which is
 * still faster than a cold start.
 */
import {
  type ByteReader,
  type ExitStatus,
  exitStatus,
  type PipedSubprocess,
  type RunProcess,
} from "../run-process.ts";

const READY = 0x52; // "R"

export class WarmProcess {
  readonly stdout: ByteReader;
  readonly exited: Promise<ExitStatus>;
  /** Resolves with any bytes that followed "R" in the same read; rejects if it never got ready. */
  readonly ready: Promise<Uint8Array>;
  isReady = false;
  isExited = false;

  constructor(readonly proc: PipedSubprocess) {
    this.stdout = proc.stdout.getReader();
    this.exited = exitStatus(proc).finally(() => {
      this.isExited = true;
    });
    this.ready = this.stdout.read().then(async ({ value }) => {
      if (value === undefined || value[0] !== READY) throw new Error(await this.failure(value));
      this.isReady = true;
      return value.subarray(1);
    });
    this.ready.catch(() => {});
  }

  get pid(): number {
    return this.proc.pid;
  }

  /** Why it never got ready: its exit status and the start of what it wrote (for the log). */
  private async failure(stdout: Uint8Array | undefined): Promise<string> {
    const unexpected =
      stdout === undefined
        ? ""
        : `, wrote ${JSON.stringify(new TextDecoder().decode(stdout.subarray(0, 200)))}`;
    if (stdout !== undefined) this.kill();
    const status = await this.exited;
    const how = status.signal !== "" ? `killed by ${status.signal}` : `exit status ${status.exitCode}`;
    const stderr = (await new Response(this.proc.stderr).text().catch(() => "")).slice(0, 500).trim();
    return `warm interpreter did not get ready (${how}${unexpected})${stderr === "" ? "" : `: ${stderr}`}`;
  }

  /** Hands the job over; from now on the process is the Run's. */
  dispatch(job: Uint8Array): RunProcess {
    const stdin = this.proc.stdin;
    if (stdin === undefined || typeof stdin === "number")
      throw new Error("warm interpreter has no stdin pipe");
    stdin.write(job);
    stdin.end();
    return {
      pid: this.proc.pid,
      warm: true,
      stdout: this.stdout,
      stderr: this.proc.stderr.getReader(),
      stdoutHead: this.ready.catch(() => new Uint8Array(0)),
      exited: this.exited,
    };
  }

  kill(): void {
    try {
      process.kill(-this.proc.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
