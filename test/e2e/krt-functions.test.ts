/**
 * Function Runs with the COMPILED krt against everything real: the chart installed by helm (the
 * controller, runtimed and the Runtime Server in the built-in pools, two gateway pods with the
 * chart-made certificate), real ServiceAccount tokens and RBAC. `krt run --function` (python and
 * bash) waits for Ready; `krt invoke` discovers the gateway (Service, pods, CA ConfigMap), verifies
 * its certificate, and calls it — directly, and through a port-forward (a kubectl stand-in that
 * forwards like `kubectl port-forward` does: the local cluster's node agent serves no port-forward).
 * get/list/describe show the function; handler errors, 403, 404 and 409 come back with their
 * exit codes. controller.scope=Namespace keeps the release to its own namespace.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KubeClient, path, R } from "@kruntimes/kube";
import { ExitCode } from "../../krt/exit-codes.ts";
import { serviceAccountToken, tokenKubeconfig } from "../support/artifacts.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { HELM_MISSING, helmPath, installNamespaced, removeRelease } from "./chart-support.ts";
import { buildKrt, type KrtResult, runKrt } from "./krt-binary.ts";

const cluster = testCluster();
if (cluster && !helmPath()) throw new Error(HELM_MISSING);
// Pod IPs are host addresses only on the local cluster; elsewhere krt would port-forward for real.
const suite = cluster?.local ? describe : describe.skip;
const RELEASE = "fn";

const PY = `calls = 0

def handler(request):
    global calls
    calls += 1
    if request.headers.get("x-fail") == "yes":
        raise ValueError("asked to fail")
    data = request.json() if request.body else {}
    print(f"handling {data.get('name', 'world')}")
    return {"hello": data.get("name", "world"), "calls": calls, "type": request.content_type}
`;
const BASH = `handler() {
  body=$(cat)
  echo "bash got \${#body} bytes: $body"
  [[ $body != fail ]]
}
`;

/** A kubectl stand-in for `port-forward pod/<name> :<port>`: records its arguments, forwards to $FORWARD_TO. */
const KUBECTL_SHIM = `#!/usr/bin/env bun
const args = process.argv.slice(2);
await Bun.write(process.env.SHIM_ARGS_FILE, JSON.stringify(args));
const [host, port] = process.env.FORWARD_TO.split(":");
const server = Bun.listen({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    async open(client) {
      client.data = { queue: [] };
      client.data.upstream = await Bun.connect({
        hostname: host,
        port: Number(port),
        socket: {
          data: (_s, d) => client.write(d),
          close: () => client.end(),
          error: () => client.end(),
        },
      });
      for (const d of client.data.queue) client.data.upstream.write(d);
    },
    data(client, d) {
      if (client.data.upstream) client.data.upstream.write(d);
      else client.data.queue.push(d);
    },
    close(client) {
      client.data.upstream?.end();
    },
  },
});
console.log("Forwarding from 127.0.0.1:" + server.port + " -> " + args[4].slice(1));
`;

suite("krt with function Runs through the chart's gateway", () => {
  const kubeconfig = cluster?.kubeconfig as string;
  const client = cluster?.client as KubeClient;
  const dir = mkdtempSync(join(tmpdir(), "krt-fn-"));
  let ns: { name: string; remove(): Promise<void> };
  let BIN = "";
  let token = "";
  let callerConfig = "";

  /** Adds `-n <ns>` before any `--` (after it, everything is the Run's arguments). */
  const inNs = (args: string[]) => {
    const dd = args.indexOf("--");
    return dd < 0 ? [...args, "-n", ns.name] : [...args.slice(0, dd), "-n", ns.name, ...args.slice(dd)];
  };
  const krt = (
    args: string[],
    opts: { kubeconfig?: string; env?: Record<string, string>; stdin?: string } = {},
  ) =>
    runKrt(BIN, inNs(args), {
      kubeconfig: opts.kubeconfig ?? kubeconfig,
      ...(opts.env ? { env: opts.env } : {}),
      stdin: opts.stdin ?? "",
    });
  /** krt invoke as the caller ServiceAccount (its kubeconfig has a token), finding the gateway itself. */
  const invoke = (args: string[], opts: { env?: Record<string, string>; stdin?: string } = {}) =>
    krt(["invoke", ...args, "--gateway-namespace", ns.name], { kubeconfig: callerConfig, ...opts });
  const ok = (r: KrtResult) => {
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    return r.stdout;
  };

  beforeAll(async () => {
    ns = await testNamespace(client, "krt-fn");
    BIN = await buildKrt();
    await installNamespaced(kubeconfig, client, RELEASE, ns.name);
    // The caller may invoke these Runs by name, nothing else (not even get runs).
    token = await serviceAccountToken(client, ns.name, "caller");
    await client.create(path(R.roles, ns.name), {
      metadata: { name: "invoke-fns" },
      rules: [
        {
          apiGroups: ["kruntimes.io"],
          resources: ["runs/invoke"],
          verbs: ["create"],
          resourceNames: ["py", "sh", "task", "nope"],
        },
      ],
    });
    await client.create(path(R.roleBindings, ns.name), {
      metadata: { name: "invoke-fns" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "invoke-fns" },
      subjects: [{ kind: "ServiceAccount", name: "caller", namespace: ns.name }],
    });
    // On the local cluster EndpointSlices stay empty (their validation refuses loopback pod IPs), so
    // krt finds the gateway pods by the Service's selector, which needs list on pods; on other
    // clusters the chart's discovery Role (Services, EndpointSlices, the CA ConfigMap) is enough.
    await client.create(path(R.roles, ns.name), {
      metadata: { name: "list-pods" },
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["list"] }],
    });
    await client.create(path(R.roleBindings, ns.name), {
      metadata: { name: "list-pods" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "list-pods" },
      subjects: [{ kind: "ServiceAccount", name: "caller", namespace: ns.name }],
    });
    callerConfig = tokenKubeconfig(kubeconfig, ns.name, "caller", token, join(dir, "caller.kubeconfig"));
    writeFileSync(join(dir, "handler.py"), PY);
    writeFileSync(join(dir, "handler.sh"), BASH);
  }, 300_000);

  afterAll(async () => {
    if (ns) await removeRelease(kubeconfig, client, RELEASE, ns.name);
  }, 180_000);

  test("krt run --function --wait returns once the python and bash functions are Ready", async () => {
    const py = await krt([
      "run",
      "--function",
      "--runtime",
      "python",
      "--name",
      "py",
      "--file",
      join(dir, "handler.py"),
      "--concurrency",
      "2",
      "--idle-timeout",
      "30m",
      "--wait",
      "--wait-timeout",
      "2m",
    ]);
    expect(py.code).toBe(0);
    expect(py.stdout).toBe("py\n");
    expect(py.stderr).toMatch(/^run py: Ready, reason Serving, serving on python-\S+ \(attempt 1\)/);
    const sh = await krt([
      "run",
      "--function",
      "--runtime",
      "bash",
      "--name",
      "sh",
      "--handler",
      "handler",
      "--file",
      join(dir, "handler.sh"),
      "--wait",
      "--wait-timeout",
      "2m",
    ]);
    expect(sh.code).toBe(0);
    expect(sh.stderr).toContain("run sh: Ready");
  }, 300_000);

  test("tasks on the same pools: `krt run --wait -- echo hi` runs what was typed and prints its output", async () => {
    const sh = await krt([
      "run",
      "--runtime",
      "bash",
      "--name",
      "typed",
      "--wait",
      "--",
      "echo",
      "hi",
      "$HOME's",
    ]);
    expect(sh).toMatchObject({ code: 0, stdout: "hi $HOME's\n" });
    expect(sh.stderr).toStartWith("run typed created\n");
    expect(sh.stderr).toContain("run typed: Succeeded");
    const py = await krt([
      "run",
      "--runtime",
      "python",
      "--wait",
      "--",
      "import sys; print(6 * 7); sys.exit(3)",
    ]);
    expect(py).toMatchObject({ code: 3, stdout: "42\n" });
    expect(py.stderr).toContain("exit code 3");
  });

  test("get -o wide, list and describe show the function, its endpoint and settings", async () => {
    const wide = ok(await krt(["get", "py", "-o", "wide"]));
    expect(wide).toMatch(/^NAME\s+RUNTIME\s+MODE\s+PHASE\s+.*ENDPOINT/);
    expect(wide).toMatch(/py\s+python\s+function\s+Ready\s+.*python-\S+#1/);
    const list = ok(await krt(["list"]));
    expect(list).toMatch(/sh\s+bash\s+function\s+Ready/);
    const desc = ok(await krt(["describe", "py"]));
    expect(desc).toMatch(/Mode:\s+function/);
    expect(desc).toMatch(/Handler:\s+handler/);
    expect(desc).toMatch(/Concurrency:\s+2/);
    expect(desc).toMatch(/Idle timeout:\s+30m/);
    expect(desc).toMatch(/Max request:\s+1Mi/);
    expect(desc).toMatch(/Invocation timeout: 30s \(default\)/);
    expect(desc).toMatch(/Endpoint:\s+python-\S+ \(uid [0-9a-f-]+, attempt 1\)/);
    expect(desc).toMatch(/ready \(rdy−sch\):/);
  });

  test("krt invoke finds the gateway, verifies it, and prints the handler's response; module state is kept", async () => {
    const first = JSON.parse(ok(await invoke(["py", "-d", '{"name":"krt"}'])));
    expect(first).toMatchObject({ hello: "krt", type: "application/json" });
    const second = JSON.parse(ok(await invoke(["py", "-d", '{"name":"again"}'])));
    // Two workers (concurrency 2): the count goes up in the worker that served the call.
    expect(second.hello).toBe("again");
    expect(second.calls + first.calls).toBeGreaterThanOrEqual(3);
    const piped = ok(await invoke(["sh"], { stdin: "from stdin" }));
    expect(piped).toBe("bash got 10 bytes: from stdin\n");
    const withHead = ok(await invoke(["sh", "-d", "x", "-i"]));
    expect(withHead).toMatch(/^status: 200\ncontent-type: text\/plain; charset=utf-8\n/);
    expect(withHead).toMatch(/x-kruntimes-invocation-id: \S+\n/);
    expect(withHead).toEndWith("\n\nbash got 1 bytes: x\n");
    const json = JSON.parse(ok(await invoke(["py", "-d", "{}", "-o", "json"])));
    expect(json.status).toBe(200);
    expect(JSON.parse(json.body).hello).toBe("world");
  });

  test("krt logs shows each invocation's output: --prefix names it, --call picks one", async () => {
    const json = JSON.parse(ok(await invoke(["py", "-d", '{"name":"logged"}', "-o", "json"])));
    const id = json.invocationId as string;
    expect(id).toBeTruthy();
    let prefixed = "";
    await eventually(
      "the invocation's line in krt logs --prefix",
      async () => {
        prefixed = ok(await krt(["logs", "py", "--prefix"]));
        return prefixed.includes(`[${id}] handling logged\n`);
      },
      60_000,
    );
    expect(prefixed).toContain("] handling krt\n");
    const one = ok(await krt(["logs", "py", "--call", id]));
    expect(one).toBe("handling logged\n");
  });

  test("handler errors exit 84 with the structured error; the Run stays Ready", async () => {
    const py = await invoke(["py", "-d", "{}", "-H", "x-fail: yes"]);
    expect(py.code).toBe(ExitCode.HandlerError);
    expect(py.stdout).toBe("");
    expect(py.stderr).toContain("error: handler error: ValueError: asked to fail");
    expect(py.stderr).toContain("Traceback");
    const sh = await invoke(["sh", "-d", "fail"]);
    expect(sh.code).toBe(ExitCode.HandlerError);
    expect(sh.stderr).toContain("exit code: 1");
    expect(ok(await krt(["get", "py"]))).toMatch(/py\s+python\s+function\s+Ready/);
  });

  test("403 without the grant, 404 for no such Run, 409 for a task; the admin's certificate is explained", async () => {
    const stranger = await serviceAccountToken(client, ns.name, "stranger");
    const denied = await krt(["invoke", "py", "--token", stranger, "--gateway-namespace", ns.name]);
    expect(denied.code).toBe(ExitCode.Forbidden);
    expect(denied.stderr).toContain(
      `you may not create runs.kruntimes.io/invoke "py" in namespace "${ns.name}"`,
    );
    // The caller may invoke "nope", which does not exist.
    const missing = await invoke(["nope"]);
    expect(missing.code).toBe(ExitCode.NotFound);
    expect(missing.stderr).toContain(`run "nope" in namespace "${ns.name}" not found`);
    const task = await krt(["run", "--runtime", "bash", "--name", "task", "--", "sleep 30"]);
    expect(task.code).toBe(0);
    const notReady = await invoke(["task"]);
    expect(notReady.code).toBe(ExitCode.NotReady);
    expect(notReady.stderr).toContain("mode task");
    const cert = await krt(["invoke", "py", "--gateway-namespace", ns.name]);
    expect(cert.code).toBe(ExitCode.Config);
    expect(cert.stderr).toContain("client certificate");
  });

  test("through a port-forward when asked: kubectl's forward, verified for the Service's DNS name", async () => {
    const pods = await client.list<{ metadata: { name: string }; status?: { podIP?: string } }>(
      path(R.pods, ns.name),
      { labelSelector: "app.kubernetes.io/name=kruntimes-gateway" },
    );
    const target = pods.items[0];
    const shim = join(dir, "kubectl");
    writeFileSync(shim, KUBECTL_SHIM);
    chmodSync(shim, 0o755);
    const argsFile = join(dir, "kubectl-args.json");
    const r = await invoke(["py", "-d", '{"name":"forwarded"}', "--gateway-via", "port-forward"], {
      env: { KRT_KUBECTL: shim, SHIM_ARGS_FILE: argsFile, FORWARD_TO: `${target?.status?.podIP}:8443` },
    });
    expect(JSON.parse(ok(r)).hello).toBe("forwarded");
    const args = JSON.parse(readFileSync(argsFile, "utf8")) as string[];
    expect(args.slice(0, 3)).toEqual(["port-forward", "-n", ns.name]);
    expect(args[3]).toMatch(/^pod\/fn-kruntimes-gateway-/);
    expect(args[4]).toBe(":8443");
  });
});
