/**
 * `krt mcp` as MCP clients run it: the COMPILED krt started by the MCP SDK's own Client over stdio
 * (and once over Streamable HTTP), with the token kubeconfig of the harness's `sdk`
 * ServiceAccount and --gateway-namespace, against the chart installed in a fresh namespace
 * (sdk-support.ts). Covers the tool list and schemas, run_task, a session's whole life (create,
 * exec, write/read/list files, close), invoke_function on a python function Run, the errors a
 * model must understand (unknown session, a path that is a directory, a session that ended, a
 * handler error, permission denied, a session that cannot get a pod), and that logs go to stderr.
 * Pod IPs are host addresses only on the local cluster, so krt reaches the gateway directly.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serviceAccountToken, tokenKubeconfig } from "../support/artifacts.ts";
import { eventually, testCluster } from "../support/cluster.ts";
import { buildKrt, runKrt, startKrt } from "./krt-binary.ts";
import { type SdkEnvironment, sdkEnvironment } from "./sdk-support.ts";

const cluster = testCluster();
const suite = cluster?.local ? describe : describe.skip;

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

const GREET = `def handler(request):
    data = request.json() if request.body else {}
    if data.get("fail"):
        raise ValueError("asked to fail")
    return {"hello": data.get("name", "world")}
`;

interface Result {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
}

/** An MCP client of a compiled `krt mcp` on stdio, with what the server wrote to stderr. */
async function stdioClient(bin: string, kubeconfig: string, gatewayNs: string, extra: string[] = []) {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["mcp", "--kubeconfig", kubeconfig, "--gateway-namespace", gatewayNs, ...extra],
    env: { PATH: process.env.PATH ?? "", HOME: tmpdir() },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const client = new Client({ name: "krt-mcp-e2e", version: "1" });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    call: async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as Result,
  };
}

const text = (r: Result) => r.content.map((c) => c.text).join("\n");
/** A tool result that is not an error, with the text shown when it is. */
const ok = (r: Result) => {
  expect({ isError: r.isError ?? false, text: r.isError ? text(r) : "" }).toEqual({
    isError: false,
    text: "",
  });
  return r.structuredContent as Record<string, unknown>;
};

suite("krt mcp (compiled) with the MCP SDK's client against the chart", () => {
  const client = cluster?.client as KubeClient;
  let env: SdkEnvironment;
  let BIN = "";
  let mcp: Awaited<ReturnType<typeof stdioClient>>;
  let observerConfig = "";
  let session = "";

  beforeAll(async () => {
    [env, BIN] = await Promise.all([
      sdkEnvironment(cluster as NonNullable<typeof cluster>, "krt-mcp"),
      buildKrt(),
    ]);
    // A user who may see Runs and find the gateway, but not drive sessions (no runs/session).
    const token = await serviceAccountToken(client, env.namespace, "observer");
    await client.create(path(R.roles, env.namespace), {
      metadata: { name: "observer" },
      rules: [
        { apiGroups: ["kruntimes.io"], resources: ["runs"], verbs: ["get", "list", "watch"] },
        { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
      ],
    });
    await client.create(path(R.roleBindings, env.namespace), {
      metadata: { name: "observer" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "observer" },
      subjects: [{ kind: "ServiceAccount", name: "observer", namespace: env.namespace }],
    });
    observerConfig = tokenKubeconfig(
      env.adminKubeconfig,
      env.namespace,
      "observer",
      token,
      join(env.dir, "observer.kubeconfig"),
    );
    // The python function invoke_function calls, started the way a user would.
    writeFileSync(join(env.dir, "greet.py"), GREET);
    const fn = await runKrt(
      BIN,
      [
        "run",
        "--function",
        "--runtime",
        "python",
        "--name",
        "greet",
        "--file",
        join(env.dir, "greet.py"),
        "--wait",
      ],
      { kubeconfig: env.kubeconfig },
    );
    if (fn.code !== 0) throw new Error(`krt run --function: ${fn.stderr}`);
    mcp = await stdioClient(BIN, env.kubeconfig, env.namespace);
  }, 300_000);

  afterAll(async () => {
    await mcp?.client.close();
    await env?.remove();
  }, 120_000);

  test("tools/list: the eight tools, each with its input and output schema", async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    const exec = tools.find((t) => t.name === "exec");
    expect(exec?.inputSchema.required?.sort()).toEqual(["command", "session"]);
    expect(Object.keys(exec?.outputSchema?.properties ?? {})).toContain("exitCode");
    expect(mcp.client.getInstructions()).toContain(`namespace "${env.namespace}"`);
  });

  test("run_task: a bash script runs to the end; phase, exit code, outputs and tails come back", async () => {
    const done = ok(
      await mcp.call("run_task", {
        script: 'echo "hello $WHO"; echo "answer=42" >> "$KRUNTIME_OUTPUTS"; echo warn >&2',
        env: { WHO: "mcp" },
      }),
    );
    expect(done).toMatchObject({
      phase: "Succeeded",
      exitCode: 0,
      outputs: { answer: "42" },
      stdoutTail: "hello mcp\n",
      stderrTail: "warn\n",
    });
    // A failing script is a result (phase Failed, its exit code), not a tool error.
    const failed = ok(await mcp.call("run_task", { runtime: "python", script: "import sys\nsys.exit(3)" }));
    expect(failed).toMatchObject({ phase: "Failed", exitCode: 3 });
  }, 120_000);

  test("run_task: a call the client cancels cancels its task; a long call reports progress", async () => {
    const abort = new AbortController();
    const progress: string[] = [];
    const call = mcp.client.callTool(
      { name: "run_task", arguments: { runtime: "python", script: "import time\ntime.sleep(60)" } },
      undefined,
      { signal: abort.signal, onprogress: (p) => progress.push(p.message ?? "") },
    );
    // The task Run appears (created by the call), then the client gives up on the call.
    const runs = () => client.list<Run>(path(RunResource, env.namespace));
    const task = await eventually("the sleeping task Run", async () =>
      (await runs()).items.find((r) => r.spec.source?.inline?.includes("time.sleep(60)")),
    );
    await Bun.sleep(5_500);
    abort.abort();
    await expect(call).rejects.toThrow();
    expect(progress[0]).toMatch(/^run_task: still running after \d+s$/);
    await eventually(
      "the task Cancelled",
      async () =>
        (await client.get<Run>(path(RunResource, env.namespace, task.metadata.name))).status?.phase ===
        "Cancelled",
    );
  }, 60_000);

  test("create_session waits until Ready and returns the name the other tools take", async () => {
    const created = ok(await mcp.call("create_session", { runtime: "bash", idleTimeoutSeconds: 600 }));
    expect(created).toMatchObject({ namespace: env.namespace, runtime: "bash", phase: "Ready" });
    session = created.session as string;
    expect(session).toStartWith("bash-session-");
  }, 120_000);

  test("exec: exit code, stdout and stderr; env, workdir and stdin; output bounded with a marker", async () => {
    const r = ok(
      await mcp.call("exec", {
        session,
        command: 'echo "out $GREETING"; echo err >&2; cat; exit 3',
        env: { GREETING: "hi" },
        stdin: "from stdin\n",
      }),
    );
    expect(r).toMatchObject({
      exitCode: 3,
      reason: "exited",
      stdout: "out hi\nfrom stdin\n",
      stderr: "err\n",
    });
    const big = await mcp.call("exec", { session, command: "head -c 100000 /dev/zero | tr '\\0' x" });
    expect(ok(big)).toMatchObject({ stdoutBytes: 100_000, stdoutTruncated: true, exitCode: 0 });
    expect(text(big)).toContain("bytes omitted by krt mcp (100000 bytes in all");
    expect(new TextEncoder().encode(big.structuredContent?.stdout as string).byteLength).toBeLessThan(
      34 * 1024,
    );
    const timedOut = ok(await mcp.call("exec", { session, command: "sleep 5", timeoutSeconds: 1 }));
    expect(timedOut).toMatchObject({ reason: "timeout", exitCode: null });
    // A call the client cancels stops the command in the session: the next one does not wait for it.
    const abort = new AbortController();
    const long = mcp.client.callTool(
      { name: "exec", arguments: { session, command: "sleep 30" } },
      undefined,
      { signal: abort.signal },
    );
    await Bun.sleep(500);
    abort.abort();
    await expect(long).rejects.toThrow();
    const started = performance.now();
    expect(ok(await mcp.call("exec", { session, command: "echo after" })).stdout).toBe("after\n");
    expect(performance.now() - started).toBeLessThan(10_000);
  }, 60_000);

  test("write_file, read_file, list_files: text and binary, parents, offsets, paging", async () => {
    expect(ok(await mcp.call("write_file", { session, path: "notes/a.txt", content: "héllo\n" }))).toEqual({
      session,
      path: "notes/a.txt",
      size: 7,
    });
    ok(await mcp.call("write_file", { session, path: "notes/a.txt", content: "more\n", mode: "append" }));
    ok(
      await mcp.call("write_file", { session, path: "notes/b.bin", content: "AP8B/g==", encoding: "base64" }),
    );
    expect(ok(await mcp.call("read_file", { session, path: "notes/a.txt" }))).toMatchObject({
      content: "héllo\nmore\n",
      encoding: "utf-8",
      size: 12,
      truncated: false,
    });
    expect(ok(await mcp.call("read_file", { session, path: "notes/b.bin" }))).toMatchObject({
      content: "AP8B/g==",
      encoding: "base64",
    });
    const part = ok(await mcp.call("read_file", { session, path: "notes/a.txt", offset: 3, maxBytes: 4 }));
    expect(part).toMatchObject({ content: "llo\n", truncated: true, nextOffset: 7 });
    // The command sees what the tools wrote (one workspace).
    expect(ok(await mcp.call("exec", { session, command: "cat notes/a.txt | wc -l" })).stdout).toBe("2\n");
    const page = ok(await mcp.call("list_files", { session, path: "notes", limit: 1 }));
    expect(page.entries).toEqual([expect.objectContaining({ name: "a.txt", type: "file", size: 12 })]);
    const rest = ok(await mcp.call("list_files", { session, path: "notes", cursor: page.nextCursor }));
    expect(rest.entries).toEqual([expect.objectContaining({ name: "b.bin", size: 4 })]);
    expect(rest.nextCursor).toBeUndefined();
    const exists = await mcp.call("write_file", {
      session,
      path: "notes/a.txt",
      content: "x",
      mode: "create",
    });
    expect(exists.isError).toBe(true);
    expect(text(exists)).toContain("already exists");
  }, 60_000);

  test("errors name what failed and the next step: unknown session, missing path, a directory", async () => {
    const unknown = await mcp.call("exec", { session: "no-such-session", command: "true" });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toContain(
      `error (NotFound): session "no-such-session" in namespace "${env.namespace}"`,
    );
    expect(text(unknown)).toContain(
      "next: sessions that ended are gone; create a new one with create_session",
    );
    const missing = await mcp.call("read_file", { session, path: "nope.txt" });
    expect(text(missing)).toContain(`${session}:nope.txt: no such file or directory`);
    const dir = await mcp.call("read_file", { session, path: "notes" });
    expect(dir.isError).toBe(true);
    expect(text(dir)).toContain("check the path with list_files");
  });

  test("permission denied: a user without runs/session is refused by the gateway, told which grant to ask for", async () => {
    const observer = await stdioClient(BIN, observerConfig, env.namespace);
    try {
      const r = await observer.call("exec", { session, command: "true" });
      expect(r.isError).toBe(true);
      expect(text(r)).toContain(
        `error (Forbidden): forbidden: you may not create runs.kruntimes.io/session "${session}"`,
      );
      expect(text(r)).toContain("resources [runs/session], verbs [create]");
      // Creating Runs is the API server's refusal, in its words.
      const c = await observer.call("run_task", { script: "true" });
      expect(text(c)).toContain("error (Forbidden): forbidden: you may not create runs.kruntimes.io");
    } finally {
      await observer.client.close();
    }
  }, 60_000);

  test("invoke_function: a JSON body, the handler's answer; a handler error with its traceback; an unknown function", async () => {
    const r = ok(await mcp.call("invoke_function", { name: "greet", json: { name: "mcp" } }));
    expect(r).toMatchObject({ status: 200, contentType: "application/json", truncated: false });
    expect(JSON.parse(r.body as string)).toEqual({ hello: "mcp" });
    const failed = await mcp.call("invoke_function", { name: "greet", body: '{"fail": true}' });
    expect(failed.isError).toBe(true);
    expect(text(failed)).toContain("error (HandlerError): handler error: ValueError: asked to fail");
    expect(text(failed)).toContain("Traceback");
    const unknown = await mcp.call("invoke_function", { name: "nope", body: "" });
    expect(text(unknown)).toContain('error (NotFound): run "nope"');
  }, 60_000);

  test("Streamable HTTP: the same tools with a bearer token; none is refused", async () => {
    const tokenFile = join(env.dir, "mcp-token");
    writeFileSync(tokenFile, "e2e-mcp-token\n");
    const server = startKrt(
      BIN,
      ["mcp", "--gateway-namespace", env.namespace, "--http", "127.0.0.1:0", "--http-token-file", tokenFile],
      { kubeconfig: env.kubeconfig },
    );
    try {
      let url = "";
      for (let i = 0; i < 200 && !url; i++) {
        url = /serving MCP \(Streamable HTTP\) at (\S+)/.exec(server.stderr())?.[1] ?? "";
        if (!url) await Bun.sleep(25);
      }
      expect(url).toStartWith("http://127.0.0.1:");
      const http = new Client({ name: "krt-mcp-e2e-http", version: "1" });
      await http.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: "Bearer e2e-mcp-token" } },
        }),
      );
      const r = (await http.callTool({
        name: "exec",
        arguments: { session, command: "echo over http" },
      })) as Result;
      expect(ok(r).stdout).toBe("over http\n");
      await http.close();
      const refused = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: "{}",
      });
      expect(refused.status).toBe(401);
      expect(server.stdout()).toBe("");
    } finally {
      server.interrupt();
      await server.result;
    }
  }, 60_000);

  test("a session that cannot get a pod is cancelled after waitSeconds, saying why", async () => {
    // The only bash pod is held by `session`: a second bash session waits for a pod.
    const r = await mcp.call("create_session", { runtime: "bash", waitSeconds: 2 });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(
      /error \(WaitTimeout\): session "bash-session-[a-z0-9]+" was not Ready within 2s \(phase Pending/,
    );
    expect(text(r)).toContain("it was cancelled, so it holds no pod");
  }, 60_000);

  test("close_session drains it to Succeeded; the session then refuses work", async () => {
    const closed = ok(await mcp.call("close_session", { session }));
    expect(closed).toMatchObject({ requested: "drain", phase: "Succeeded", ended: true });
    const after = await mcp.call("exec", { session, command: "true" });
    expect(after.isError).toBe(true);
    expect(text(after)).toContain("error (NotReady)");
    expect(text(after)).toContain("create a new one with create_session");
    expect(ok(await mcp.call("close_session", { session })).requested).toBe("none");
  }, 60_000);

  test("stdout carried only the protocol; each call was logged on stderr", () => {
    expect(mcp.stderr()).toContain(`serving MCP on stdio for namespace "${env.namespace}"`);
    expect(mcp.stderr()).toMatch(/krt mcp: exec session=bash-session-\S+: ok \(\d+ ms\)/);
    expect(mcp.stderr()).toContain("krt mcp: exec session=no-such-session: error (NotFound)");
  });
});
