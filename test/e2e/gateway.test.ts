/**
 * The gateway end to end on the local cluster: the controller with the real runtimed and Runtime
 * Server, function Runs in python and bash, and the gateway as real processes (two of them) with
 * their own ServiceAccount (least-privilege ClusterRole), real TokenReview/SubjectAccessReview,
 * real ServiceAccount tokens and a TLS certificate from a CA the test makes (verified strictly).
 * Every protocol: plain HTTP, Connect JSON (curl), Connect binary, gRPC (grpcurl) and gRPC-Web,
 * over http and https; the error table provoked for real (503: the serving pod's runtimed killed);
 * a Run re-placed on another pod stays callable; a gateway restart loses nothing. The local
 * cluster's pod IPs are loopback addresses, which EndpointSlices cannot hold, so every call here is
 * routed with the `status.endpoint.address` runtimed writes in its Ready status.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Run, RunResource } from "@kruntimes/api";
import { FunctionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import { type KubeClient, path, R } from "@kruntimes/kube";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, getRuntime, installCrds } from "../../controller/testing/cluster/objects.ts";
import {
  createClient,
  createConnectTransport,
  createGrpcWebTransport,
} from "../../gateway/testing/connect-clients.ts";
import { type GatewayProc, startGatewayProcess } from "../../gateway/testing/gateway-process.ts";
import { makeTestPki, type TestPki } from "../../gateway/testing/tls.ts";
import type { ClusterInfo } from "../localcluster/supervisor.ts";
import { eventually, killLocalContainer, testCluster, testNamespace } from "../support/cluster.ts";
import {
  createGatewayRbac,
  deleteGatewayRbac,
  gatewayFiles,
  grantRuns,
  saToken as saTokenIn,
} from "../support/gateway.ts";
import { imageRuntime } from "../support/runtimes.ts";

const cluster = testCluster();
const suite = cluster?.local ? describe : describe.skip;
const REPO = resolve(import.meta.dir, "../..");
setDefaultTimeout(60_000);

const GRPCURL_VERSION = /GRPCURL_VERSION=(\S+)/.exec(
  readFileSync(join(REPO, "test/localcluster/build/versions.env"), "utf8"),
)?.[1] as string;

/** grpcurl from the version-keyed cache, built from the Go module proxy on first use. */
function grpcurl(): string {
  const cache =
    process.env.KRT_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "kruntimes");
  const bin = join(cache, "bin", `grpcurl-${GRPCURL_VERSION}`, "grpcurl");
  if (!existsSync(bin)) {
    const r = Bun.spawnSync(["bash", join(REPO, "test/localcluster/build/build-binaries.sh"), "grpcurl"], {
      stdout: "inherit",
      stderr: "inherit",
    });
    if (r.exitCode !== 0)
      throw new Error("building grpcurl failed: bash test/localcluster/build/build-binaries.sh grpcurl");
  }
  return bin;
}

const runtime = (name: string, image: string, replicas: number) => imageRuntime(name, image, { replicas });

const PY = `
import time
def handle(request):
    text = request.body.decode()
    if text == "raise":
        raise ValueError("asked to raise")
    if text.startswith("sleep:"):
        time.sleep(float(text[6:]))
    return request.body
`;
const BASH = `handle() { cat; }`;

suite("gateway (real apiserver, RBAC, runtimed, Runtime Server)", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;
  let gw: GatewayProc;
  let gw2: GatewayProc;
  let pki: TestPki;
  let dir = "";
  let gwFlags: string[] = [];
  let gwEnv: Record<string, string> = {};
  const tokens: Record<string, string> = {};

  const saToken = (sa: string) => saTokenIn(client, ns.name, sa);
  const grantInvoke = (sa: string, run: string) =>
    grantRuns(client, ns.name, `${sa}-invoke-${run}`, sa, "invoke", [run]);

  async function functionRun(
    name: string,
    runtimeName: string,
    inline: string,
    extra: Record<string, unknown> = {},
  ) {
    await client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name },
      spec: {
        runtime: runtimeName,
        mode: { function: { handler: "handle", ...extra } },
        source: { inline },
        // A lost pod is a retried attempt: the Run is re-placed (attempt + 1) instead of failing.
        retryPolicy: { maxAttempts: 3, backoff: { initial: "100ms" } },
      },
    });
    return eventually(
      `${name} Ready`,
      async () => {
        const r = await client.get<Run>(path(RunResource, ns.name, name));
        if (r.status?.phase && ["Failed", "Succeeded", "Cancelled", "Timeout"].includes(r.status.phase))
          throw new Error(`${name} ended ${r.status.phase}: ${r.status.message}`);
        return r.status?.phase === "Ready" ? r : undefined;
      },
      60_000,
    );
  }

  const invokeUrl = (base: string, run: string) => `${base}/v1/namespaces/${ns.name}/runs/${run}/invoke`;
  const httpBase = () => `http://127.0.0.1:${gw.ports.http}`;
  const httpsBase = () => `https://localhost:${gw.ports.https}`;

  function plain(
    run: string,
    body: string,
    token: string | null = tokens.caller as string,
    headers: Record<string, string> = {},
    base = httpBase(),
  ) {
    return fetch(invokeUrl(base, run), {
      method: "POST",
      body,
      headers: {
        "content-type": "text/plain",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
      tls: { ca: readFileSync(pki.caFile, "utf8") },
    } as RequestInit);
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "krt-e2e-gateway-"));
    pki = makeTestPki({ dns: ["localhost"], ips: ["127.0.0.1"] });
    await installCrds(client);
    ns = await testNamespace(client, "krt-e2e-gateway");
    // The gateway's ServiceAccount and least-privilege ClusterRole (as the chart renders it).
    await createGatewayRbac(client, ns.name, `krt-e2e-gateway-${ns.name}`);
    for (const sa of ["caller", "stranger"])
      await client.create(path(R.serviceAccounts, ns.name), { metadata: { name: sa } });
    tokens.caller = await saToken("caller");
    tokens.stranger = await saToken("stranger");
    await grantInvoke("caller", "py");
    await grantInvoke("caller", "sh");

    ctl = startController({
      namespace: ns.name,
      kubeconfig: cluster?.kubeconfig as string,
      runtimed: "real",
      flags: [`--dataplane-subjects=system:serviceaccount:${ns.name}:gateway`],
    });
    await ctl.waitFor("scheduling and reconciling");
    await createRuntime(client, ns.name, runtime("python", "ghcr.io/kruntimes/python", 2));
    await createRuntime(client, ns.name, runtime("bash", "ghcr.io/kruntimes/bash", 1));
    for (const [name, want] of [
      ["python", 2],
      ["bash", 1],
    ] as const)
      await eventually(
        `Runtime ${name} available`,
        async () => (await getRuntime(client, ns.name, name)).status?.availableReplicas === want,
        120_000,
      );

    const files = await gatewayFiles(client, ns.name, cluster?.kubeconfig as string, dir);
    gwFlags = [
      ...files.flags,
      "--https-port=0",
      `--tls-cert-file=${pki.certFile}`,
      `--tls-key-file=${pki.keyFile}`,
      "--max-request-bytes=64Ki",
    ];
    gwEnv = files.env;
    gw = await startGatewayProcess(gwFlags, gwEnv);
    await functionRun("py", "python", PY, { concurrency: 1, maxRequestBytes: 1024 });
    await functionRun("sh", "bash", BASH);
  }, 300_000);

  afterAll(async () => {
    gw?.kill();
    gw2?.kill();
    ctl?.kill();
    await ns?.remove();
    await deleteGatewayRbac(client, `krt-e2e-gateway-${ns?.name}`);
  });

  test("plain HTTP to python and bash functions, over http and https (strict CA)", async () => {
    // The local cluster's pod IPs are loopback addresses, which EndpointSlices cannot hold: the
    // gateway routes with the address runtimed wrote in the Ready status.
    for (const name of ["py", "sh"]) {
      const r = await client.get<Run>(path(RunResource, ns.name, name));
      expect(r.status?.endpoint?.address).toMatch(/^127\.\d+\.\d+\.\d+:\d+$/);
    }
    for (const base of [httpBase(), httpsBase()]) {
      const py = await plain("py", "hello py", tokens.caller, {}, base);
      expect(py.status).toBe(200);
      expect(await py.text()).toBe("hello py");
      const sh = await plain("sh", "hello sh", tokens.caller, {}, base);
      expect(sh.status).toBe(200);
      expect(await sh.text()).toBe("hello sh");
    }
  });

  test("Connect JSON with curl, over http and https --cacert", async () => {
    for (const [base, extra] of [
      [httpBase(), []],
      [httpsBase(), ["--cacert", pki.caFile]],
    ] as const) {
      const r = Bun.spawnSync([
        "curl",
        "-sS",
        ...extra,
        "-H",
        "Content-Type: application/json",
        "-H",
        `Authorization: Bearer ${tokens.caller}`,
        "--data",
        JSON.stringify({ namespace: ns.name, run: "py", body: btoa("via curl") }),
        `${base}/kruntimes.gateway.v1.FunctionService/Invoke`,
      ]);
      const out = JSON.parse(r.stdout.toString()) as { body: string };
      expect(atob(out.body)).toBe("via curl");
    }
  });

  test("Connect binary and gRPC-Web clients, over http and https (strict CA)", async () => {
    const ca = readFileSync(pki.caFile, "utf8");
    // Bun's fetch verifies against exactly this CA.
    const strict: typeof fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
      fetch(input, { ...init, tls: { ca } } as RequestInit)) as typeof fetch;
    for (const transport of [
      createConnectTransport({ baseUrl: httpBase(), useBinaryFormat: true }),
      createGrpcWebTransport({ baseUrl: httpBase() }),
      createConnectTransport({ baseUrl: httpsBase(), useBinaryFormat: true, fetch: strict }),
      createGrpcWebTransport({ baseUrl: httpsBase(), fetch: strict }),
    ]) {
      const c = createClient(FunctionService, transport);
      const res = await c.invoke(
        { namespace: ns.name, run: "sh", body: new TextEncoder().encode("bin") },
        { headers: { authorization: `Bearer ${tokens.caller}` } },
      );
      expect(new TextDecoder().decode(res.body)).toBe("bin");
    }
  });

  test("gRPC with grpcurl: h2c with the served protoset, TLS with the .proto sources and -cacert", async () => {
    const bin = grpcurl();
    const protoset = join(dir, "gateway.protoset");
    writeFileSync(protoset, new Uint8Array(await (await fetch(`${httpBase()}/v1/protoset`)).arrayBuffer()));
    const data = JSON.stringify({ namespace: ns.name, run: "py", body: btoa("via grpcurl") });
    const h2c = Bun.spawnSync([
      bin,
      "-plaintext",
      "-protoset",
      protoset,
      "-H",
      `authorization: Bearer ${tokens.caller}`,
      "-d",
      data,
      `127.0.0.1:${gw.ports.grpc}`,
      "kruntimes.gateway.v1.FunctionService/Invoke",
    ]);
    expect(h2c.stderr.toString()).toBe("");
    expect(atob((JSON.parse(h2c.stdout.toString()) as { body: string }).body)).toBe("via grpcurl");
    const tls = Bun.spawnSync([
      bin,
      "-cacert",
      pki.caFile,
      "-import-path",
      join(REPO, "proto"),
      "-proto",
      "kruntimes/gateway/v1/function.proto",
      "-H",
      `authorization: Bearer ${tokens.caller}`,
      "-d",
      data,
      `localhost:${gw.ports.https}`,
      "kruntimes.gateway.v1.FunctionService/Invoke",
    ]);
    expect(tls.stderr.toString()).toBe("");
    expect(atob((JSON.parse(tls.stdout.toString()) as { body: string }).body)).toBe("via grpcurl");
    const denied = Bun.spawnSync([
      bin,
      "-plaintext",
      "-protoset",
      protoset,
      "-d",
      data,
      `127.0.0.1:${gw.ports.grpc}`,
      "kruntimes.gateway.v1.FunctionService/Invoke",
    ]);
    expect(denied.stderr.toString()).toContain("Unauthenticated");
  });

  test("401 without a token and with a garbage token", async () => {
    expect((await plain("py", "x", null)).status).toBe(401);
    expect((await plain("py", "x", "garbage")).status).toBe(401);
  });

  test("403 without the grant, 200 once a RoleBinding grants create runs/invoke on that one Run", async () => {
    expect((await plain("py", "x", tokens.stranger)).status).toBe(403);
    await grantInvoke("stranger", "py");
    // A denial is cached for --auth-deny-ttl (5 s): the grant shows once it expires.
    await eventually(
      "stranger allowed",
      async () => (await plain("py", "x", tokens.stranger)).status === 200,
      30_000,
    );
    expect((await plain("sh", "x", tokens.stranger)).status).toBe(403);
  });

  test("404, 409, 413, 429, 504 and a handler error, provoked for real (503: see below)", async () => {
    await grantInvoke("caller", "nothere");
    // A new RoleBinding reaches the apiserver's authorizer through its informer: until then the
    // call is refused 403, so wait for the answer the grant makes possible.
    await eventually(
      "404 once the grant is in force",
      async () => (await plain("nothere", "x")).status === 404,
      30_000,
    );
    await grantInvoke("caller", "task1");
    await client.create(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name: "task1" },
      spec: { runtime: "bash", mode: { task: {} }, source: { inline: "true" } },
    });
    const notFn = await eventually(
      "409 once the grant is in force",
      async () => {
        const r = await plain("task1", "x");
        return r.status === 403 ? undefined : r;
      },
      30_000,
    );
    expect(notFn.status).toBe(409);
    expect(((await notFn.json()) as { runNotReady: { mode: string } }).runNotReady.mode).toBe("task");
    expect((await plain("py", "x".repeat(2048))).status).toBe(413);
    const raised = await plain("py", "raise");
    expect(raised.status).toBe(500);
    const err = (await raised.json()) as { code: string; handlerError: { type: string } };
    expect(err.code).toBe("unknown");
    expect(err.handlerError.type).toBe("ValueError");
    expect((await plain("py", "sleep:3", tokens.caller, { "connect-timeout-ms": "300" })).status).toBe(504);
    // concurrency 1 and a queue of 64: 80 slow calls at once, some must be refused 429.
    const answers = await Promise.all(
      Array.from({ length: 80 }, () =>
        plain("py", "sleep:0.2").then(async (r) => ({
          status: r.status,
          retryAfter: r.headers.get("retry-after"),
          reason: ((await r.json().catch(() => ({}))) as { reason?: string }).reason ?? "",
        })),
      ),
    );
    const busy = answers.find((a) => a.status === 429);
    expect(busy).toBeDefined();
    expect(busy?.reason).toBe("REASON_FUNCTION_BUSY");
    expect(Number(busy?.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(answers.filter((a) => a.status !== 429).every((a) => a.status === 200)).toBe(true);
  });

  /** SIGKILLs a container's process group (on whichever node runs the pod); its agent restarts it. */
  function killContainer(pod: string, container: string): void {
    killLocalContainer(cluster?.local as ClusterInfo, ns.name, pod, container);
  }

  test("503 + Retry-After while the serving pod's runtimed is down (re-resolved: same pod), then 200 again", async () => {
    const run = await client.get<Run>(path(RunResource, ns.name, "sh"));
    const pod = run.status?.endpoint?.pod as string;
    expect((await plain("sh", "up")).status).toBe(200);
    // The node agent restarts runtimed at once; kill it again until a call lands while it is down.
    let unavailable: Response | undefined;
    for (let i = 0; i < 10 && !unavailable; i++) {
      killContainer(pod, "runtimed");
      const res = await plain("sh", "down");
      if (res.status === 503) unavailable = res;
      else expect(res.status).toBe(200);
      if (!unavailable) await Bun.sleep(200);
    }
    expect(unavailable?.headers.get("retry-after")).toBe("1");
    const body = (await unavailable?.json()) as { code: string; reason: string; message: string };
    expect([body.code, body.reason]).toEqual(["unavailable", "REASON_UNREACHABLE"]);
    expect(body.message).toContain(pod);
    // runtimed comes back, re-adopts the Run (same pod, same attempt): callable again.
    await eventually("sh callable again", async () => (await plain("sh", "back")).status === 200, 60_000);
    const after = await client.get<Run>(path(RunResource, ns.name, "sh"));
    expect(after.status?.endpoint?.attempt).toBe(run.status?.endpoint?.attempt);
  });

  test("a gateway restart loses nothing; a second gateway serves the same Runs", async () => {
    gw2 = await startGatewayProcess(gwFlags, gwEnv);
    const second = await fetch(invokeUrl(`http://127.0.0.1:${gw2.ports.http}`, "py"), {
      method: "POST",
      body: "two",
      headers: { authorization: `Bearer ${tokens.caller}` },
    });
    expect(await second.text()).toBe("two");
    gw.kill();
    await gw.exited;
    gw = await startGatewayProcess(gwFlags, gwEnv);
    expect(await (await plain("py", "after restart")).text()).toBe("after restart");
  });

  test("a Run re-placed on another pod stays callable", async () => {
    const before = await client.get<Run>(path(RunResource, ns.name, "py"));
    expect((await plain("py", "before")).status).toBe(200);
    await client.delete(path(R.pods, ns.name, before.status?.endpoint?.pod as string));
    const after = await eventually(
      "py re-placed and Ready",
      async () => {
        const r = await client.get<Run>(path(RunResource, ns.name, "py"));
        return r.status?.phase === "Ready" && r.status.endpoint?.podUID !== before.status?.endpoint?.podUID
          ? r
          : undefined;
      },
      90_000,
    );
    expect(after.status?.endpoint?.attempt).toBeGreaterThan(before.status?.endpoint?.attempt ?? 0);
    expect(await (await plain("py", "moved")).text()).toBe("moved");
  }, 150_000);
});
