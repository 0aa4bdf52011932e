/**
 * What the two language workers share: spawning the worker in its own process group with pipes,
 * killing that group, and turning output written outside the protocol into log chunks.
 */
import type { Subprocess } from "bun";
import type { LogChunk } from "./worker.ts";

export type WorkerSubprocess = Subprocess<"pipe", "pipe", "pipe">;

export function spawnWorker(cmd: string[], cwd: string, env: Record<string, string>): WorkerSubprocess {
  return Bun.spawn({ cmd, cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true }) as WorkerSubprocess;
}

/** SIGKILL to the process group led by `pid`. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** Reads a pipe to its end, handing each chunk on as text. Resolves with the last `keep` characters. */
export async function pumpText(
  stream: ReadableStream<Uint8Array>,
  streamName: LogChunk["stream"],
  onChunk: (chunk: LogChunk) => void,
  keep = 4096,
): Promise<string> {
  const decoder = new TextDecoder();
  let tail = "";
  try {
    for await (const bytes of stream) {
      const text = decoder.decode(bytes, { stream: true });
      if (text === "") continue;
      tail = (tail + text).slice(-keep);
      onChunk({ stream: streamName, text });
    }
  } catch {
    // the pipe failed: nothing more to read
  }
  return tail;
}
