/**
 * A stand-in backend for the server and HTTP unit tests: answers every tool from memory (a few
 * sessions with files) and records the calls, so the MCP layer — schemas, results, renderings,
 * errors — is tested without a cluster. test/e2e/krt-mcp.test.ts runs the real backend.
 */
import { CliError } from "../../errors.ts";
import { ExitCode } from "../../exit-codes.ts";
import type { McpBackend } from "../backend.ts";
import { encodeContent, HeadTail } from "../bounded.ts";
import type { McpLimits, ToolInput, ToolName, ToolOutput } from "../schemas.ts";

export interface FakeCall {
  tool: ToolName;
  input: unknown;
}

export class FakeBackend implements McpBackend {
  readonly namespace = "team";
  readonly calls: FakeCall[] = [];
  readonly files = new Map<string, Map<string, Uint8Array>>();

  constructor(private readonly limits: McpLimits) {}

  private sessionFiles(session: string): Map<string, Uint8Array> {
    const f = this.files.get(session);
    if (!f)
      throw new CliError(
        ExitCode.NotFound,
        `session "${session}" in namespace "team" not found: run team/${session} does not exist`,
        "list Runs with `krt list`",
      );
    return f;
  }

  async create_session(a: ToolInput<"create_session">): Promise<ToolOutput<"create_session">> {
    this.calls.push({ tool: "create_session", input: a });
    const name = a.name ?? `${a.runtime}-session-x1`;
    this.files.set(name, new Map());
    return {
      session: name,
      namespace: this.namespace,
      runtime: a.runtime,
      phase: "Ready",
      pod: "bash-pod-1",
    };
  }

  /** Sessions whose `sleep` was cut short by the call's abort signal (a client's cancellation). */
  readonly aborted: string[] = [];

  async exec(a: ToolInput<"exec">, signal?: AbortSignal): Promise<ToolOutput<"exec">> {
    this.calls.push({ tool: "exec", input: a });
    this.sessionFiles(a.session);
    // `yes N` prints N bytes of "y\n"; `sleep S` takes S seconds; `fail` exits 3 with a stderr line;
    // anything else is echoed.
    const out = new HeadTail(this.limits.maxOutputBytes);
    const err = new HeadTail(this.limits.maxOutputBytes);
    const sleep = /^sleep ([\d.]+)$/.exec(a.command);
    if (sleep) {
      const cut = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), Number(sleep[1]) * 1000);
        signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      if (cut) {
        this.aborted.push(a.session);
        throw new CliError(ExitCode.Interrupted, "cancelled");
      }
    }
    const yes = /^yes (\d+)$/.exec(a.command);
    if (yes) out.push(new TextEncoder().encode("y\n".repeat(Number(yes[1]) / 2)));
    else if (a.command === "fail") err.push(new TextEncoder().encode("it failed\n"));
    else out.push(new TextEncoder().encode(`${a.command}\n`));
    return {
      session: a.session,
      exitCode: a.command === "fail" ? 3 : 0,
      reason: "exited",
      stdout: out.text(),
      stderr: err.text(),
      stdoutBytes: out.total,
      stderrBytes: err.total,
      stdoutTruncated: out.truncated,
      stderrTruncated: err.truncated,
      durationMs: 5,
    };
  }

  async read_file(a: ToolInput<"read_file">): Promise<ToolOutput<"read_file">> {
    this.calls.push({ tool: "read_file", input: a });
    const data = this.sessionFiles(a.session).get(a.path);
    if (!data)
      throw new CliError(ExitCode.NotFound, `${a.session}:${a.path}: no such file or directory (not found)`);
    const rest = data.subarray(a.offset);
    const truncated = rest.byteLength > a.maxBytes;
    const e = encodeContent(rest.subarray(0, a.maxBytes), truncated);
    return {
      session: a.session,
      path: a.path,
      size: data.byteLength,
      offset: a.offset,
      bytes: e.bytes,
      encoding: e.encoding,
      content: e.content,
      truncated,
      ...(truncated ? { nextOffset: a.offset + e.bytes } : {}),
    };
  }

  async write_file(a: ToolInput<"write_file">): Promise<ToolOutput<"write_file">> {
    this.calls.push({ tool: "write_file", input: a });
    const data =
      a.encoding === "base64"
        ? new Uint8Array(Buffer.from(a.content, "base64"))
        : new TextEncoder().encode(a.content);
    this.sessionFiles(a.session).set(a.path, data);
    return { session: a.session, path: a.path, size: data.byteLength };
  }

  async list_files(a: ToolInput<"list_files">): Promise<ToolOutput<"list_files">> {
    this.calls.push({ tool: "list_files", input: a });
    const names = [...this.sessionFiles(a.session).keys()].sort();
    const start = a.cursor ? names.indexOf(a.cursor) + 1 : 0;
    const page = names.slice(start, start + a.limit);
    const more = start + a.limit < names.length;
    return {
      session: a.session,
      path: a.path,
      entries: page.map((n) => ({
        name: n,
        path: n,
        type: "file" as const,
        size: this.files.get(a.session)?.get(n)?.byteLength ?? 0,
        mode: "0644",
        modified: "2026-01-02T03:04:05.000Z",
      })),
      ...(more ? { nextCursor: page.at(-1) as string } : {}),
    };
  }

  async close_session(a: ToolInput<"close_session">): Promise<ToolOutput<"close_session">> {
    this.calls.push({ tool: "close_session", input: a });
    this.sessionFiles(a.session);
    this.files.delete(a.session);
    return { session: a.session, requested: a.cancel ? "cancel" : "drain", phase: "Succeeded", ended: true };
  }

  async run_task(a: ToolInput<"run_task">): Promise<ToolOutput<"run_task">> {
    this.calls.push({ tool: "run_task", input: a });
    return {
      run: `${a.runtime}-t1`,
      phase: "Succeeded",
      exitCode: 0,
      outputs: { answer: "42" },
      stdoutTail: "hello\n",
      stderrTail: "",
      stdoutTruncated: false,
      stderrTruncated: false,
      durationMs: 120,
    };
  }

  async invoke_function(a: ToolInput<"invoke_function">): Promise<ToolOutput<"invoke_function">> {
    this.calls.push({ tool: "invoke_function", input: a });
    if (a.name === "broken")
      throw new CliError(
        ExitCode.HandlerError,
        "handler error: ValueError: asked to fail\ninvocation: inv-1\nTraceback (most recent call last): …",
        "the Run stays Ready; see the invocation's output with `krt logs broken --call inv-1`",
      );
    const body = JSON.stringify({ echo: a.json ?? a.body ?? null });
    return {
      function: a.name,
      status: 200,
      contentType: "application/json",
      headers: {},
      body,
      encoding: "utf-8",
      bytes: body.length,
      truncated: false,
      invocationId: "inv-2",
      durationMs: 1.5,
    };
  }
}
