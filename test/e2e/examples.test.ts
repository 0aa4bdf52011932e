/**
 * The examples in examples/, run the way their READMEs tell a user to, against the chart in a
 * fresh namespace (test/e2e/sdk-support.ts): the user is ServiceAccount `examples` of
 * examples/sdk-user.yaml with the kubeconfig examples/user-kubeconfig.sh writes, Python programs
 * run with the SDK's venv, manifests are applied with kubectl as the cluster admin, and the custom
 * Runtime's Run is created with krt. Each test checks what the example printed or wrote, not only
 * its exit code.
 *
 * Two things differ from a real cluster, and the tests say so where they happen:
 * - examples/llm-agent talks to a stand-in for an OpenAI-compatible endpoint served by this file
 *   (scripted tool calls that check what the agent sends back); no model and no network.
 * - examples/custom-bash-runtime's image cannot be built here (no Docker). The local node agent
 *   maps image names to host commands from one shared file, so the Runtime is applied with its
 *   image swapped for the bash runtime image, and jq comes from the host: what is tested is the
 *   Runtime manifest and the Run, not the Dockerfile.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RunResource } from "@kruntimes/api";
import { path, R } from "@kruntimes/kube";
import { binaryPath } from "../localcluster/binaries.ts";
import { eventually, type TestCluster, testCluster, testNamespace } from "../support/cluster.ts";
import { type ProcessResult, runProcess } from "../support/process.ts";
import { buildKrt } from "./krt-binary.ts";
import { pythonWithSdk } from "./sdk-python-env.ts";
import { SDK_USER_RULES, type SdkEnvironment, sdkEnvironment } from "./sdk-support.ts";

const ROOT = join(import.meta.dir, "..", "..");
const EXAMPLES = join(ROOT, "examples");
const _SDK = join(ROOT, "sdk", "python");
const cluster = testCluster();
// Gateway pods are dialled by pod IP and images are host commands: that needs the local cluster.
const suite = cluster?.local ? describe : describe.skip;

/** Fails with the process's output when it did not exit with `code`. */
function expectExit(r: ProcessResult, code: number, what: string): void {
  if (r.code !== code)
    console.error(`${what} exited ${r.code}:\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  expect({ what, code: r.code }).toEqual({ what, code });
}

suite("examples/", () => {
  const c = cluster as TestCluster;
  let sdk: SdkEnvironment;
  let py = "";
  let kubectlBin = "";
  let dir = "";
  let userKubeconfig = "";

  beforeAll(async () => {
    kubectlBin = binaryPath("kubectl", ROOT, process.env);
    [sdk, py] = await Promise.all([sdkEnvironment(c, "examples"), pythonWithSdk()]);
    dir = mkdtempSync(join(sdk.dir, "work-"));
    // The examples' README: the admin applies sdk-user.yaml (in the release's namespace here) and
    // writes a token kubeconfig for ServiceAccount `examples` with user-kubeconfig.sh.
    const rbac = readFileSync(join(EXAMPLES, "sdk-user.yaml"), "utf8").replace(
      /^(\s*namespace:) kruntimes$/gm,
      `$1 ${sdk.namespace}`,
    );
    expectExit(await kubectl(["apply", "-f", "-"], rbac), 0, "kubectl apply sdk-user.yaml");
    // The same rules as the harness's `sdk` user, which are those docs/sdk/python.md prescribes.
    const role = await c.client.get<{ rules: unknown[] }>(path(R.roles, sdk.namespace, "kruntimes-sdk-user"));
    expect(role.rules).toEqual(SDK_USER_RULES);
    userKubeconfig = join(dir, "examples.kubeconfig");
    const r = await runProcess(
      ["bash", join(EXAMPLES, "user-kubeconfig.sh"), sdk.namespace, "examples", userKubeconfig],
      { env: { PATH: process.env.PATH ?? "", KUBECONFIG: sdk.adminKubeconfig, KUBECTL: kubectlBin } },
    );
    expectExit(r, 0, "user-kubeconfig.sh");
    expect(r.stdout).toContain(`use it: export KUBECONFIG=${userKubeconfig}`);
  }, 600_000);

  afterAll(async () => {
    await sdk?.remove();
  }, 120_000);

  /** The environment the READMEs tell a user to set: their kubeconfig and the gateway's namespace. */
  const userEnv = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH ?? "",
    HOME: dir,
    KUBECONFIG: userKubeconfig,
    KRT_GATEWAY_NAMESPACE: sdk.namespace,
    ...extra,
  });
  const python = (args: string[], extra: Record<string, string> = {}) =>
    runProcess([py, ...args], { cwd: dir, env: userEnv(extra) });
  /** kubectl as the cluster admin, for what the READMEs ask an admin to apply. */
  const kubectl = (args: string[], stdin?: string) =>
    runProcess([kubectlBin, "--kubeconfig", sdk.adminKubeconfig, ...args], { stdin });
  const runsLabelled = async (selector: string) =>
    (
      await c.client.list<{ metadata: { name: string } }>(path(RunResource, sdk.namespace), {
        labelSelector: selector,
      })
    ).items.map((r) => r.metadata.name);

  test("burst-tasks: a burst of 30 task Runs, waited by watch, summarized from status.timing", async () => {
    const r = await python([join(EXAMPLES, "burst-tasks", "burst.py"), "--count", "30"]);
    expectExit(r, 0, "burst.py");
    const batch = /^(burst-[0-9a-f]{6}): created 30 task Runs on runtime bash/m.exec(r.stdout)?.[1];
    expect(batch).toBeDefined();
    expect(r.stdout).toContain("phases: Succeeded 30\n");
    expect(r.stdout).toContain("outputs: 30/30 Succeeded Runs reported the right square");
    // Every stage of the latency table has numbers (the timing stamps were all there).
    for (const stage of ["create → scheduled", "scheduled → started", "create → Succeeded"]) {
      expect(r.stdout).toMatch(new RegExp(`${stage}\\s+\\d+\\.\\d\\s+\\d+\\.\\d\\s+\\d+\\.\\d`));
    }
    expect(r.stdout).toContain(`deleted the 30 Runs (label kruntimes.io/burst=${batch})`);
    expect(await runsLabelled(`kruntimes.io/burst=${batch}`)).toEqual([]);
  }, 120_000);

  test("custom-bash-runtime: the Runtime manifest and a Run using jq (image swapped: no Docker here)", async () => {
    // The image's one addition is jq; on the local cluster the bash image runs on the host, so the
    // host must have it (scripts/setup.sh installs it).
    if (!Bun.which("jq"))
      throw new Error("jq is not installed on this host: install it (apt-get install jq)");
    const manifest = readFileSync(join(EXAMPLES, "custom-bash-runtime", "runtime.yaml"), "utf8");
    const image = "registry.example.com/team/bash-jq:1.0";
    expect(manifest).toContain(`image: ${image}`);
    const applied = await kubectl(
      ["apply", "-n", sdk.namespace, "-f", "-"],
      manifest.replace(image, "ghcr.io/kruntimes/bash:0.1.0"),
    );
    expectExit(applied, 0, "kubectl apply runtime.yaml");
    try {
      const ready = await kubectl([
        "wait",
        "-n",
        sdk.namespace,
        "--for=condition=Ready",
        "runtime/bash-jq",
        "--timeout=120s",
      ]);
      expectExit(ready, 0, "kubectl wait runtime/bash-jq");
      const krt = await buildKrt();
      const r = await runProcess(
        [krt, "run", "--manifest", join(EXAMPLES, "custom-bash-runtime", "run.yaml"), "--wait"],
        { cwd: dir, env: userEnv() },
      );
      expectExit(r, 0, "krt run --manifest run.yaml --wait");
      expect(r.stdout).toMatch(/^jq \d/m);
      expect(r.stdout).toContain("ada\t34.5\ngrace\t15\n");
      const name = /run (orders-summary-[a-z0-9]+) created/.exec(r.stderr)?.[1] as string;
      expect(name).toBeDefined();
      const run = await c.client.get<{
        status: { outputs: Record<string, string>; assignment: { pod: string } };
      }>(path(RunResource, sdk.namespace, name));
      expect(run.status.outputs).toEqual({ orders: "3", revenue: "49.5", top_sku: "pen" });
      expect(run.status.assignment.pod).toStartWith("bash-jq-");
    } finally {
      await kubectl(["delete", "-n", sdk.namespace, "runtime/bash-jq", "--wait=false"]);
    }
  }, 180_000);

  test("k8s-diagnosis-agent: a session with a read-only ServiceAccount diagnoses a namespace and cleans up", async () => {
    const target = await testNamespace(c.client, "examples-target");
    const fill = (file: string) =>
      readFileSync(join(EXAMPLES, "k8s-diagnosis-agent", file), "utf8")
        .replace(/\$\{RUNS_NAMESPACE\}/g, sdk.namespace)
        .replace(/\$\{TARGET_NAMESPACE\}/g, target.name);
    const setup = fill("setup.yaml");
    try {
      expectExit(await kubectl(["apply", "-f", "-"], setup), 0, "kubectl apply setup.yaml");
      expectExit(await kubectl(["apply", "-f", "-"], fill("demo-workload.yaml")), 0, "kubectl apply demo");
      expectExit(
        await kubectl([
          "wait",
          "-n",
          sdk.namespace,
          "--for=condition=Ready",
          "runtime/diag",
          "--timeout=120s",
        ]),
        0,
        "kubectl wait runtime/diag",
      );
      // The crash loop shows once the worker has restarted; the web pod is then long Ready.
      type Pod = {
        metadata: { labels?: Record<string, string> };
        status: { containerStatuses?: { ready: boolean; restartCount: number }[] };
      };
      await eventually(
        "the demo's worker restarted and web is ready",
        async () => {
          const pods = (await c.client.list<Pod>(path(R.pods, target.name))).items;
          const app = (a: string) =>
            pods.find((p) => p.metadata.labels?.app === a)?.status.containerStatuses?.[0];
          return (app("worker")?.restartCount ?? 0) >= 1 && app("web")?.ready;
        },
        60_000,
      );

      const r = await python([
        join(EXAMPLES, "k8s-diagnosis-agent", "agent.py"),
        "--target-namespace",
        target.name,
        "--out",
        "report.json",
      ]);
      expectExit(r, 0, "agent.py");
      for (const step of ["01_inventory", "02_events", "03_logs", "04_permissions", "05_report"])
        expect(r.stdout).toContain(`${step}.py`);
      expect(r.stdout).toContain(`3 pods in ${target.name}, 2 not ready`);
      expect(r.stdout).toMatch(/session diag-session-[a-z0-9]+ drained \(Succeeded\) and deleted/);

      type Finding = { pod: string; app: string; problem: string; detail: string; last_log_lines?: string[] };
      const report = JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as {
        namespace: string;
        healthy: string[];
        findings: Finding[];
        intermediate_files: string[];
        permissions: {
          identity: string;
          denied: string[];
          unintended: string[];
          attempts: { attempt: string; status: number }[];
        };
      };
      expect(report.namespace).toBe(target.name);
      expect(report.healthy).toHaveLength(1);
      expect(report.healthy[0]).toStartWith("web-");
      const byApp = Object.fromEntries(report.findings.map((f) => [f.app, f]));
      expect(Object.keys(byApp).sort()).toEqual(["cache", "worker"]);
      expect(byApp.worker?.problem).toBe("crash loop");
      expect(byApp.worker?.detail).toStartWith("exit code 3,");
      expect(byApp.worker?.last_log_lines).toContain(
        "fatal: open /etc/worker/config.yaml: no such file or directory",
      );
      expect(byApp.cache?.problem).toBe("image cannot be pulled");
      expect(report.intermediate_files).toEqual(
        expect.arrayContaining(["work/pods.json", "work/events.json", "work/permissions.json"]),
      );
      expect(report.intermediate_files.some((f) => /^work\/logs\/worker-.*\.worker\.log$/.test(f))).toBe(
        true,
      );

      // Least privilege, as the API server sees it from inside the session.
      const perms = report.permissions;
      expect(perms.identity).toBe(`system:serviceaccount:${sdk.namespace}:diag-agent`);
      for (const denied of [
        `delete pods in ${target.name}`,
        `list secrets in ${target.name}`,
        `create pods/exec in ${target.name}`,
        `list pods in ${sdk.namespace}`,
        "list nodes in (all)",
      ])
        expect(perms.denied).toContain(denied);
      const tried = Object.fromEntries(perms.attempts.map((a) => [a.attempt.split(" (")[0], a.status]));
      expect(tried[`list secrets in ${target.name}`]).toBe(403);
      expect(tried[`list pods in ${sdk.namespace}`]).toBe(403);
      // The gap the README lists first: the Runtime's ServiceAccount also carries runtimed's Role
      // (the controller binds it to the template's serviceAccountName), so code in the session may
      // read Runs and write Run statuses and Leases. When that is fixed, this fails: update the
      // README's "Gaps found".
      expect(perms.unintended.sort()).toEqual(
        [
          `create leases.coordination.k8s.io in ${sdk.namespace}`,
          `list runs.kruntimes.io in ${sdk.namespace}`,
          `patch runs/status.kruntimes.io in ${sdk.namespace}`,
        ].sort(),
      );

      // Cleaned up: no session Run of the agent is left.
      expect(await runsLabelled("app.kubernetes.io/name=k8s-diagnosis-agent")).toEqual([]);
    } finally {
      await kubectl(["delete", "--wait=false", "--ignore-not-found", "-f", "-"], setup);
      await target.remove();
    }
  }, 240_000);

  test("llm-agent: the tool-calling loop against a stand-in endpoint (scripted tool calls, no model)", async () => {
    const endpoint = standInEndpoint({ throttleFirst: true });
    try {
      const r = await python(
        [
          join(EXAMPLES, "llm-agent", "agent.py"),
          "Write a program that prints the first ten Fibonacci numbers, run it, and tell me what it printed.",
        ],
        endpoint.env("stand-in-model"),
      );
      expectExit(r, 0, "agent.py");
      expect(endpoint.failures).toEqual([]);
      expect(endpoint.requests).toBe(FIB_SCRIPT.length + 1); // one 429 retried
      expect(r.stdout).toMatch(/^session [a-z0-9-]+\/python-session-[a-z0-9]+ is ready$/m);
      expect(r.stdout).toContain('[step 1] write_file {"path":"fib/fib.py"');
      expect(r.stdout).toContain("[step 2] exec");
      expect(r.stdout).toContain("[step 3] read_file");
      expect(r.stdout).toContain(`\n${FIB_ANSWER}\n`);
      expect(r.stderr).toContain("the endpoint answered 429; retrying");
      expect(await runsLabelled("app.kubernetes.io/name=llm-agent")).toEqual([]);
    } finally {
      endpoint.stop();
    }
  }, 180_000);

  test("llm-agent: --max-steps stops a model that never answers", async () => {
    const endpoint = standInEndpoint({ throttleFirst: false });
    try {
      const r = await python(
        [join(EXAMPLES, "llm-agent", "agent.py"), "--max-steps", "3", "Loop forever."],
        endpoint.env("looping-model"),
      );
      expectExit(r, 2, "agent.py --max-steps 3");
      expect(endpoint.failures).toEqual([]);
      expect(endpoint.requests).toBe(3);
      expect(r.stdout.match(/\[step \d\] exec/g)).toHaveLength(3);
      expect(r.stderr).toContain("stopped: no answer after 3 model calls (--max-steps)");
    } finally {
      endpoint.stop();
    }
  }, 180_000);
});

// ---------------------------------------------------------------------------------------------
// The stand-in for an OpenAI-compatible chat completions endpoint. Model "stand-in-model" plays
// FIB_SCRIPT: each turn checks the result of the previous tool calls (what the agent really got
// from the session) and makes the next calls; model "looping-model" calls exec forever.

const FIB_PROGRAM = "a, b = 0, 1\nfor _ in range(10):\n    print(a)\n    a, b = b, a + b\n";
const FIB_OUT = "0\n1\n1\n2\n3\n5\n8\n13\n21\n34\n";
const FIB_ANSWER = "The program printed the first ten Fibonacci numbers: 0, 1, 1, 2, 3, 5, 8, 13, 21, 34.";

type ToolCall = { name: string; args: Record<string, unknown> };
type Turn = { check?: (results: Record<string, unknown>[]) => string | undefined; calls: ToolCall[] };

const FIB_SCRIPT: Turn[] = [
  {
    calls: [
      {
        name: "write_file",
        args: { path: "fib/fib.py", content: FIB_PROGRAM },
      },
    ],
  },
  {
    check: ([w]) =>
      w?.path === "fib/fib.py" && w.size === FIB_PROGRAM.length ? undefined : `write_file answered ${j(w)}`,
    calls: [{ name: "exec", args: { command: "cd fib && python3 fib.py > out.txt && wc -l < out.txt" } }],
  },
  {
    check: ([e]) => (e?.exit_code === 0 && e.stdout === "10\n" ? undefined : `exec answered ${j(e)}`),
    calls: [{ name: "read_file", args: { path: "fib/out.txt" } }],
  },
  {
    check: ([f]) =>
      f?.content === FIB_OUT && f.size === FIB_OUT.length ? undefined : `read_file answered ${j(f)}`,
    // Two calls in one turn: an output far over the bound, and a file that does not exist.
    calls: [
      { name: "exec", args: { command: "seq 1 200000", timeout_seconds: 30 } },
      { name: "read_file", args: { path: "missing.txt" } },
    ],
  },
  {
    check: ([big, missing]) => {
      const out = String(big?.stdout ?? "");
      if (big?.exit_code !== 0 || out.length > 8100 || !/\[\.\.\. \d+ bytes cut \.\.\.\]/.test(out))
        return `the big exec was not cut to the bound: ${out.length} characters`;
      if (!out.startsWith("1\n2\n3\n") || !out.endsWith("199999\n200000\n"))
        return "the cut output lost its ends";
      if (!String(missing?.error ?? "").startsWith("NotFound:"))
        return `reading a missing file answered ${j(missing)}`;
      return undefined;
    },
    calls: [],
  },
];

const j = (v: unknown) => JSON.stringify(v)?.slice(0, 300);

function standInEndpoint(opts: { throttleFirst: boolean }) {
  const failures: string[] = [];
  let requests = 0;
  let throttled = !opts.throttleFirst;
  const fail = (why: string) => {
    failures.push(why);
    return Response.json({ error: { message: why } }, { status: 400 });
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      requests++;
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/v1/chat/completions")
        return fail(`unexpected ${req.method} ${url.pathname}`);
      if (req.headers.get("authorization") !== "Bearer test-key") return fail("no or wrong bearer key");
      // One 429 first: the agent must honour Retry-After and send the same request again.
      if (!throttled) {
        throttled = true;
        return new Response("slow down", { status: 429, headers: { "retry-after": "0" } });
      }
      const body = (await req.json()) as {
        model: string;
        tools: { type: string; function: { name: string; parameters: { type: string } } }[];
        messages: {
          role: string;
          content?: string | null;
          tool_calls?: { id: string }[];
          tool_call_id?: string;
        }[];
      };
      const names = body.tools?.map(
        (t) => t.type === "function" && t.function.parameters.type === "object" && t.function.name,
      );
      if (j(names) !== j(["exec", "read_file", "write_file"])) return fail(`tools offered: ${j(body.tools)}`);
      const msgs = body.messages;
      if (msgs[0]?.role !== "system" || msgs[1]?.role !== "user")
        return fail("no system and user message first");
      // Every tool call of the last assistant turn has its answer, in order.
      const lastAssistant = msgs.findLastIndex((m) => m.role === "assistant");
      const answers = lastAssistant < 0 ? [] : msgs.slice(lastAssistant + 1);
      const ids = lastAssistant < 0 ? [] : (msgs[lastAssistant]?.tool_calls ?? []).map((t) => t.id);
      if (j(answers.map((m) => m.tool_call_id)) !== j(ids))
        return fail(`tool answers ${j(answers)} for calls ${j(ids)}`);
      const results = answers.map((m) => JSON.parse(m.content ?? "null") as Record<string, unknown>);
      const turn = msgs.filter((m) => m.role === "assistant").length;

      let calls: ToolCall[];
      let content: string | null = null;
      if (body.model === "looping-model") {
        calls = [{ name: "exec", args: { command: `echo turn ${turn}` } }];
      } else if (body.model === "stand-in-model") {
        const step = FIB_SCRIPT[turn];
        if (!step) return fail(`turn ${turn} is past the script`);
        const why = step.check?.(results);
        if (why) return fail(why);
        calls = step.calls;
        if (calls.length === 0) content = FIB_ANSWER;
      } else return fail(`unknown model ${body.model}`);
      return Response.json({
        id: `chatcmpl-${requests}`,
        object: "chat.completion",
        model: body.model,
        choices: [
          {
            index: 0,
            finish_reason: calls.length ? "tool_calls" : "stop",
            message: {
              role: "assistant",
              content,
              ...(calls.length
                ? {
                    tool_calls: calls.map((call, i) => ({
                      id: `call_${turn}_${i}`,
                      type: "function",
                      function: { name: call.name, arguments: JSON.stringify(call.args) },
                    })),
                  }
                : {}),
            },
          },
        ],
      });
    },
  });
  return {
    get failures() {
      return failures;
    },
    get requests() {
      return requests;
    },
    env: (model: string) => ({
      OPENAI_BASE_URL: `http://127.0.0.1:${server.port}/v1`,
      OPENAI_API_KEY: "test-key",
      OPENAI_MODEL: model,
    }),
    stop: () => server.stop(true),
  };
}
