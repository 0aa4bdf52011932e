/**
 * The MCP layer with the SDK's own Client over an in-memory transport and a stand-in backend:
 * the tools and their JSON schemas as clients see them, arguments refused by the schemas (with
 * the field's name), structured results and their text, bounded output, and failures as tool
 * errors with their class and what to do next.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { DEFAULT_LIMITS, type McpLimits } from "./limits.ts";
import { createMcpServer } from "./server.ts";
import { FakeBackend } from "./testing/fake-backend.ts";

const TOOLS = [
  "close_session",
  "create_session",
  "exec",
  "invoke_function",
  "list_files",
  "read_file",
  "run_task",
  "write_file",
];

let client: Client;
let backend: FakeBackend;
let logs: string[];

async function connect(limits: McpLimits = DEFAULT_LIMITS) {
  backend = new FakeBackend(limits);
  logs = [];
  const server = createMcpServer({
    backend,
    limits,
    version: "test",
    log: (l) => logs.push(l),
    progressIntervalMs: 50,
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  client = new Client({ name: "unit", version: "1" });
  await client.connect(b);
}

type Result = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
};
const call = async (name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as Result;
const text = (r: Result) => r.content.map((c) => c.text).join("\n");

beforeEach(() => connect());
afterEach(() => client.close());

describe("tools/list", () => {
  test("the eight tools, each with an input and an output schema", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.description?.length).toBeGreaterThan(40);
      expect(t.inputSchema.type).toBe("object");
      expect(t.outputSchema?.type).toBe("object");
    }
  });

  test("schemas carry the bounds: required fields, defaults, the server's limits", async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    const exec = byName.exec?.inputSchema as {
      required: string[];
      properties: Record<string, Record<string, unknown>>;
    };
    expect(exec.required.sort()).toEqual(["command", "session"]);
    expect(exec.properties.timeoutSeconds).toMatchObject({ type: "integer", minimum: 1, maximum: 3600 });
    const read = byName.read_file?.inputSchema as { properties: Record<string, Record<string, unknown>> };
    expect(read.properties.maxBytes).toMatchObject({
      maximum: DEFAULT_LIMITS.maxReadBytes,
      default: DEFAULT_LIMITS.maxReadBytes,
    });
    const create = byName.create_session?.inputSchema as {
      properties: Record<string, Record<string, unknown>>;
      required?: string[];
    };
    expect(create.properties.runtime).toMatchObject({ default: "bash" });
    expect(create.required ?? []).toEqual([]);
    expect(byName.read_file?.annotations?.readOnlyHint).toBe(true);
    expect(byName.close_session?.annotations?.destructiveHint).toBe(true);
  });

  test("the instructions name the namespace and the limits", async () => {
    const i = client.getInstructions() ?? "";
    expect(i).toContain('namespace "team"');
    expect(i).toContain(`${DEFAULT_LIMITS.maxOutputBytes} bytes per stream`);
  });
});

describe("calls", () => {
  test("a session's round trip: create, write, read, list, exec, close", async () => {
    const created = await call("create_session", {});
    expect(created.structuredContent).toMatchObject({ session: "bash-session-x1", phase: "Ready" });
    expect(text(created)).toContain('session "bash-session-x1" is Ready');
    const s = "bash-session-x1";
    expect(
      (await call("write_file", { session: s, path: "a.txt", content: "hi there\n" })).structuredContent,
    ).toEqual({
      session: s,
      path: "a.txt",
      size: 9,
    });
    const read = await call("read_file", { session: s, path: "a.txt" });
    expect(read.structuredContent).toMatchObject({
      content: "hi there\n",
      encoding: "utf-8",
      truncated: false,
      size: 9,
    });
    expect(text(read)).toBe("a.txt (9 bytes):\nhi there\n");
    const list = await call("list_files", { session: s });
    expect(list.structuredContent?.entries).toEqual([
      {
        name: "a.txt",
        path: "a.txt",
        type: "file",
        size: 9,
        mode: "0644",
        modified: "2026-01-02T03:04:05.000Z",
      },
    ]);
    expect(text(list)).toContain("a.txt");
    const failed = await call("exec", { session: s, command: "fail" });
    expect(failed.isError).toBeFalsy();
    expect(failed.structuredContent).toMatchObject({ exitCode: 3, reason: "exited", stderr: "it failed\n" });
    expect(text(failed)).toBe("exit code 3 (5 ms)\nstdout: (empty)\nstderr (10 bytes):\nit failed");
    const closed = await call("close_session", { session: s });
    expect(closed.structuredContent).toMatchObject({ requested: "drain", phase: "Succeeded", ended: true });
    // Defaults the schemas filled in reached the backend.
    expect(backend.calls.find((c) => c.tool === "close_session")?.input).toEqual({
      session: s,
      cancel: false,
      waitSeconds: 60,
    });
    expect(backend.calls.find((c) => c.tool === "write_file")?.input).toMatchObject({
      mode: "truncate",
      parents: true,
      encoding: "utf-8",
    });
    expect(logs.some((l) => /^exec session=bash-session-x1: ok \(\d+ ms\)$/.test(l))).toBe(true);
  });

  test("bounded output is marked with the bytes left out", async () => {
    await client.close();
    await connect({ ...DEFAULT_LIMITS, maxOutputBytes: 100, maxReadBytes: 16 });
    await call("create_session", { name: "s1" });
    const r = await call("exec", { session: "s1", command: "yes 100000" });
    expect(r.structuredContent).toMatchObject({ stdoutBytes: 100_000, stdoutTruncated: true });
    expect(text(r)).toContain(
      "[… 99900 bytes omitted by krt mcp (100000 bytes in all; only the first and last are kept) …]",
    );
    await call("write_file", { session: "s1", path: "big", content: "0123456789".repeat(5) });
    const read = await call("read_file", { session: "s1", path: "big" });
    expect(read.structuredContent).toMatchObject({
      bytes: 16,
      truncated: true,
      nextOffset: 16,
      content: "0123456789012345",
    });
    expect(text(read)).toContain("continue with offset 16");
    // maxBytes above the server's limit is refused by the schema.
    const over = await call("read_file", { session: "s1", path: "big", maxBytes: 17 });
    expect(over.isError).toBe(true);
    expect(text(over)).toContain("maxBytes");
  });

  test("a long call reports progress to a client that asked for it, so its timeout can be reset", async () => {
    await call("create_session", { name: "slow" });
    const seen: { progress: number; message?: string }[] = [];
    const r = (await client.callTool(
      { name: "exec", arguments: { session: "slow", command: "sleep 0.4" } },
      undefined,
      {
        onprogress: (p: { progress: number; message?: string }) => seen.push(p),
        resetTimeoutOnProgress: true,
      },
    )) as Result;
    expect(r.isError).toBeFalsy();
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen[0]?.message).toMatch(/^exec: still running after \d+s$/);
  });

  test("binary content travels as base64 both ways", async () => {
    await call("create_session", { name: "s2" });
    await call("write_file", { session: "s2", path: "b.bin", content: "AP8B/g==", encoding: "base64" });
    const r = await call("read_file", { session: "s2", path: "b.bin" });
    expect(r.structuredContent).toMatchObject({ encoding: "base64", content: "AP8B/g==", size: 4 });
  });

  test("run_task and invoke_function return their structured results", async () => {
    const t = await call("run_task", { script: "echo hello; echo answer=42 >> $KRUNTIME_OUTPUTS" });
    expect(t.structuredContent).toMatchObject({ phase: "Succeeded", exitCode: 0, outputs: { answer: "42" } });
    expect(text(t)).toContain("answer=42");
    const f = await call("invoke_function", { name: "echo", json: { n: 1 } });
    expect(f.structuredContent).toMatchObject({ status: 200, body: '{"echo":{"n":1}}' });
  });
});

describe("errors", () => {
  test("arguments that break the schema are refused, naming the field", async () => {
    const r = await call("exec", { session: "Not_A_Name", command: "" });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain("session");
    expect(text(r)).toContain("command");
    expect(backend.calls).toEqual([]);
  });

  test("an unknown session: a tool error naming it, with the next step as a tool", async () => {
    const r = await call("exec", { session: "nope", command: "ls" });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    expect(text(r)).toBe(
      'error (NotFound): session "nope" in namespace "team" not found: run team/nope does not exist\nnext: sessions that ended are gone; create a new one with create_session',
    );
    expect(logs.at(-1)).toMatch(/^exec session=nope: error \(NotFound\): session "nope"/);
  });

  test("a missing file points at list_files", async () => {
    await call("create_session", { name: "s3" });
    const r = await call("read_file", { session: "s3", path: "missing.txt" });
    expect(text(r)).toContain("next: check the path with list_files");
  });

  test("a handler error keeps its traceback; the hint is about the handler, not a krt command", async () => {
    const r = await call("invoke_function", { name: "broken", body: "x" });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain("error (HandlerError): handler error: ValueError: asked to fail");
    expect(text(r)).toContain("Traceback");
    expect(text(r)).not.toContain("krt logs");
    expect(text(r)).toContain("the function stays Ready");
  });
});

describe("toolError hints", () => {
  test("krt command hints give way to tool hints; an unreachable gateway says the next call retries", async () => {
    const { toolError } = await import("./tool-errors.ts");
    const { CliError } = await import("../errors.ts");
    const { ExitCode } = await import("../exit-codes.ts");
    const t = (e: unknown, s?: "session" | "function" | "run") =>
      (toolError(e, s).content[0] as { text: string }).text;
    expect(
      t(
        new CliError(ExitCode.NotFound, 'run "x" not found in namespace "n"', "list Runs with `krt list`"),
        "run",
      ),
    ).toBe(
      'error (NotFound): run "x" not found in namespace "n"\nnext: check the name; Runs that ended may have been deleted',
    );
    expect(
      t(new CliError(ExitCode.NotFound, 'runtime "rb" not found', "use one of: bash, python"), "run"),
    ).toContain("next: use one of: bash, python");
    expect(
      t(
        new CliError(ExitCode.Unavailable, "cannot reach the gateway (direct 10.0.0.1)", "check --gateway"),
        "session",
      ),
    ).toBe(
      "error (Unavailable): cannot reach the gateway (direct 10.0.0.1)\nnext: check --gateway; retry: the next call looks for the gateway again",
    );
    expect(t(new CliError(ExitCode.Forbidden, "forbidden: you may not create runs", "ask for a Role"))).toBe(
      "error (Forbidden): forbidden: you may not create runs\nnext: ask for a Role",
    );
    expect(t(new Error("boom"))).toBe(
      "error (Internal): unexpected error: Error: boom\nnext: this is a bug in krt: rerun with KRT_DEBUG=1 for the stack trace and report it",
    );
  });
});
