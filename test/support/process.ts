/**
 * Runs a command to its end and returns its exit code with both outputs read in full (read
 * concurrently, so a chatty stderr cannot block the process). The suites that drive scripts,
 * helm, VitePress or the krt binary use this one instead of each spelling out the same dance.
 */

export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ProcessOptions {
  cwd?: string;
  /** The whole environment of the process (pass `{ ...process.env, X }` to extend it). */
  env?: Record<string, string | undefined>;
  stdin?: string;
}

export async function runProcess(cmd: string[], opts: ProcessOptions = {}): Promise<ProcessResult> {
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: opts.env,
    stdin: opts.stdin !== undefined ? new Blob([opts.stdin]) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}
