/**
 * Session Runs through the real gateway on the local cluster: the controller with the real runtimed
 * and bash Runtime Server, the gateway as a real process with its own least-privilege
 * ServiceAccount, real TokenReview/SubjectAccessReview, ServiceAccount tokens and strict TLS.
 * Authorization allowed and denied (a RoleBinding granting exactly create on runs/session of one
 * Run), Exec streamed end to end over Connect and gRPC, the curl file routes (PUT, GET, directory
 * pages, 404), `krt exec`/`krt cp`/`krt ls` as a user runs them, and a full queue → 429.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Run, RunResource } from "@kruntimes/api";
import { type ExecResponse, SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import { type KubeClient, path, R } from "@kruntimes/kube";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, installCrds, readyPods } from "../../controller/testing/cluster/objects.ts";
import {
  Code,
  ConnectError,
  createClient,
  createConnectTransport,
  createGrpcTransport,
} from "../../gateway/session/testing/clients.ts";
import { type GatewayProc, startGatewayProcess } from "../../gateway/testing/gateway-process.ts";
import { makeTestPki, type TestPki } from "../../gateway/testing/tls.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
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
setDefaultTimeout(120_000);
const dec = new TextDecoder();

suite("sessions through the gateway (real apiserver, RBAC, runtimed, Runtime Server)", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;
  let gw: GatewayProc;
  let pki: TestPki;
  let dir = "";
  const tokens: Record<string, string> = {};

  const saToken = (sa: string) => saTokenIn(client, ns.name, sa);
  const grant = (sa: string, subresource: string, run: string) =>
    grantRuns(client, ns.name, `${sa}-${subresource}-${run}`, sa, subresource, [run]);

  async function session(name: string, mode: Record<string, unknown> = {}): Promise<Run> {
    await client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name },
      spec: { runtime: "sess", mode: { session: mode } },
    });
    return eventually(
      `${name} Ready`,
      async () => {
        const r = await client.get<Run>(path(RunResource, ns.name, name));
        if (r.status?.phase && ["Failed", "Succeeded", "Cancelled", "Timeout"].includes(r.status.phase))
          throw new Error(`${name} ended ${r.status.phase}: ${r.status.message}`);
        return r.status?.phase === "Ready" ? r : undefined;
      },
      90_000,
    );
  }

  const ca = () => readFileSync(pki.caFile, "utf8");
  const https = () => `https://localhost:${gw.ports.https}`;
  const tlsFetch = ((input: string | URL | Request, init?: RequestInit) =>
    fetch(input, { ...init, tls: { ca: ca() } } as RequestInit)) as typeof fetch;
  const sessions = () =>
    createClient(
      SessionService,
      createConnectTransport({ baseUrl: https(), useBinaryFormat: true, fetch: tlsFetch }),
    );
  /** Connect binary on the HTTP/1.1 listener: Exec and ReadFile take the gateway's pass-through path there. */
  const httpSessions = () =>
    createClient(
      SessionService,
      createConnectTransport({ baseUrl: `http://127.0.0.1:${gw.ports.http}`, useBinaryFormat: true }),
    );
  const grpcSessions = () =>
    createClient(SessionService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${gw.ports.grpc}` }));
  const as = (who: string) => ({ headers: { authorization: `Bearer ${tokens[who]}` } });
  const target = (run = "box") => ({ namespace: ns.name, run });
  const shell = (line: string) => ({ program: { case: "shell" as const, value: line } });

  async function failure(p: Promise<unknown>): Promise<ConnectError> {
    try {
      await p;
    } catch (e) {
      return ConnectError.from(e);
    }
    throw new Error("the call did not fail");
  }

  function curl(args: string[]) {
    const r = Bun.spawnSync(
      ["curl", "-sS", "--cacert", pki.caFile, "-H", `Authorization: Bearer ${tokens.caller}`, ...args],
      {
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
  }

  /** krt as a user runs it; the gateway commands get the gateway, its CA and the caller's token. */
  async function krt(args: string[]) {
    const gatewayFlags = ["--gateway", https(), "--ca-file", pki.caFile, "--token", tokens.caller as string];
    const argv =
      args[0] === "session"
        ? [...args, "-n", ns.name]
        : [args[0] as string, ...gatewayFlags, "-n", ns.name, ...args.slice(1)];
    const p = Bun.spawn(["bun", join(REPO, "krt/main.ts"), ...argv], {
      env: { ...process.env, KUBECONFIG: cluster?.kubeconfig as string },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(p.stdout).text(),
      new Response(p.stderr).text(),
      p.exited,
    ]);
    return { stdout, stderr, code };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "krt-e2e-gwsess-"));
    pki = makeTestPki({ dns: ["localhost"], ips: ["127.0.0.1"] });
    await installCrds(client);
    ns = await testNamespace(client, "krt-e2e-gwsess");
    await createGatewayRbac(client, ns.name, `krt-e2e-gwsess-${ns.name}`);
    for (const sa of ["caller", "stranger", "invoker"]) {
      await client.create(path(R.serviceAccounts, ns.name), { metadata: { name: sa } });
      tokens[sa] = await saToken(sa);
    }
    await grant("caller", "session", "box");
    await grant("invoker", "invoke", "box");

    ctl = startController({
      namespace: ns.name,
      kubeconfig: cluster?.kubeconfig as string,
      runtimed: "real",
      flags: [
        "--scheduled-start-timeout=30s",
        `--dataplane-subjects=system:serviceaccount:${ns.name}:gateway`,
      ],
    });
    await ctl.waitFor("scheduling and reconciling");
    await createRuntime(client, ns.name, imageRuntime("sess", "ghcr.io/kruntimes/bash", { replicas: 2 }));
    await eventually(
      "sess pods ready",
      async () => (await readyPods(client, ns.name, "sess")).length === 2,
      180_000,
    );
    const files = await gatewayFiles(client, ns.name, cluster?.kubeconfig as string, dir);
    gw = await startGatewayProcess(
      [...files.flags, "--https-port=0", `--tls-cert-file=${pki.certFile}`, `--tls-key-file=${pki.keyFile}`],
      files.env,
    );
    await session("box", { maxQueuedOperations: 1 });
  }, 400_000);

  afterAll(async () => {
    gw?.kill();
    ctl?.kill();
    await ns?.remove();
    await deleteGatewayRbac(client, `krt-e2e-gwsess-${ns?.name}`);
  });

  test("authorization: create on runs/session of this Run allows; no grant, or runs/invoke only, is 403", async () => {
    const ok = await sessions().stat({ target: target(), path: "" }, as("caller"));
    expect(ok.info?.type).toBeDefined();
    for (const who of ["stranger", "invoker"]) {
      const err = await failure(sessions().stat({ target: target(), path: "" }, as(who)));
      expect(err.code).toBe(Code.PermissionDenied);
      expect(err.rawMessage).toContain("runs/session");
    }
    const noToken = await failure(sessions().stat({ target: target(), path: "" }));
    expect(noToken.code).toBe(Code.Unauthenticated);
    const res = await tlsFetch(`${https()}/v1/namespaces/${ns.name}/runs/box/files/`, {
      headers: { authorization: `Bearer ${tokens.stranger}` },
    });
    expect(res.status).toBe(403);
  });

  test("Exec output is streamed as produced (Connect over TLS, gRPC over h2c, Connect over HTTP/1.1); the exit code comes last", async () => {
    for (const c of [sessions(), grpcSessions(), httpSessions()]) {
      const seen: { what: string; at: number }[] = [];
      for await (const ev of c.exec(
        { target: target(), command: shell("echo first; sleep 2; echo second >&2; exit 7") },
        as("caller"),
      ) as AsyncIterable<ExecResponse>) {
        if (ev.event.case === "output")
          seen.push({
            what: `${ev.event.value.stream}:${dec.decode(ev.event.value.data)}`,
            at: performance.now(),
          });
        if (ev.event.case === "exited")
          seen.push({ what: `exit:${ev.event.value.exitCode}`, at: performance.now() });
      }
      expect(seen.map((s) => s.what)).toEqual(["stdout:first\n", "stderr:second\n", "exit:7"]);
      // The first line arrived while the command slept: a buffering hop would deliver both at the end.
      expect((seen[1]?.at ?? 0) - (seen[0]?.at ?? 0)).toBeGreaterThan(1500);
    }
  });

  test("curl: PUT uploads (chunked, one upload), GET streams it back, a directory is a JSON page, a missing file 404", async () => {
    const local = join(dir, "data.bin");
    const data = new Uint8Array(1536 * 1024).map((_, i) => (i * 31) % 256);
    writeFileSync(local, data);
    const base = `${https()}/v1/namespaces/${ns.name}/runs/box/files`;
    const put = curl(["-T", local, "-w", "\n%{http_code}", `${base}/up/data.bin?parents=true`]);
    expect(put.out.trim().split("\n").at(-1)).toBe("201");
    expect(JSON.parse(put.out.trim().split("\n")[0] as string).info).toMatchObject({
      path: "up/data.bin",
      size: String(data.byteLength),
    });
    const back = join(dir, "back.bin");
    const get = curl(["-o", back, "-w", "%{http_code}", `${base}/up/data.bin`]);
    expect(get.out).toBe("200");
    expect(readFileSync(back).equals(Buffer.from(data))).toBe(true);
    const sum = await sessions().exec(
      { target: target(), command: shell("wc -c < up/data.bin") },
      as("caller"),
    );
    let out = "";
    for await (const ev of sum) if (ev.event.case === "output") out += dec.decode(ev.event.value.data);
    expect(out.trim()).toBe(String(data.byteLength));
    for (const n of ["b", "a", "c"]) curl(["-T", "-", `${base}/up/${n}.txt`]);
    const page1 = JSON.parse(curl([`${base}/up?limit=2`]).out) as {
      entries: { name: string }[];
      nextPageToken: string;
    };
    expect(page1.entries.map((e) => e.name)).toEqual(["a.txt", "b.txt"]);
    const page2 = JSON.parse(
      curl([`${base}/up?limit=2&page_token=${encodeURIComponent(page1.nextPageToken)}`]).out,
    ) as {
      entries: { name: string }[];
      nextPageToken?: string;
    };
    expect(page2.entries.map((e) => e.name)).toEqual(["c.txt", "data.bin"]);
    expect(page2.nextPageToken ?? "").toBe("");
    const missing = curl(["-w", "\n%{http_code}", `${base}/nope.txt`]);
    expect(missing.out.trim().split("\n").at(-1)).toBe("404");
  });

  test("krt exec, krt cp and krt ls end to end", async () => {
    const echo = await krt(["exec", "box", "--", "sh", "-c", "echo out; echo err >&2; exit 3"]);
    expect(echo).toMatchObject({ stdout: "out\n", stderr: "err\n", code: 3 });
    const local = join(dir, "krt.txt");
    writeFileSync(local, "from krt\n");
    expect((await krt(["cp", local, "box:k/", "--parents"])).code).toBe(0);
    const cat = await krt(["exec", "box", "--workdir", "k", "--", "cat", "krt.txt"]);
    expect(cat.stdout).toBe("from krt\n");
    const copy = join(dir, "krt-back.txt");
    expect((await krt(["cp", "box:k/krt.txt", copy])).code).toBe(0);
    expect(readFileSync(copy, "utf8")).toBe("from krt\n");
    const ls = await krt(["ls", "box:k", "-o", "json"]);
    expect(JSON.parse(ls.stdout)).toEqual([
      expect.objectContaining({ name: "krt.txt", type: "file", size: 9 }),
    ]);
  });

  test("krt session create --wait, then krt session close --wait: Ready, then drained to Succeeded", async () => {
    const created = await krt([
      "session",
      "create",
      "--runtime",
      "sess",
      "--idle-timeout",
      "10m",
      "--name",
      "via-krt",
      "--wait",
    ]);
    expect(created).toMatchObject({ stdout: "via-krt\n", code: 0 });
    const run = await client.get<Run>(path(RunResource, ns.name, "via-krt"));
    expect(run.status?.phase).toBe("Ready");
    expect(run.spec.mode.session?.idleTimeout).toBe("10m");
    const closed = await krt(["session", "close", "via-krt", "--wait"]);
    expect(closed.code).toBe(0);
    expect(closed.stdout).toContain("Succeeded");
  });

  test("a full session queue is 429 with Retry-After (Connect and the PUT route); CancelOperation frees it", async () => {
    const c = sessions();
    const blocker = c
      .exec({ target: target(), command: shell("sleep 60") }, as("caller"))
      [Symbol.asyncIterator]();
    const first = await blocker.next();
    const opId = (first.value as ExecResponse).operationId;
    expect(opId).not.toBe("");
    // One mutation may wait behind the running one (maxQueuedOperations: 1).
    const queued = c
      .exec({ target: target(), command: shell("echo queued") }, as("caller"))
      [Symbol.asyncIterator]();
    expect(((await queued.next()).value as ExecResponse).operationId).not.toBe("");
    const busy = await failure(c.makeDir({ target: target(), path: "x" }, as("caller")));
    const busyExec = await failure(
      (async () => {
        for await (const _ of httpSessions().exec(
          { target: target(), command: shell("true") },
          as("caller"),
        ));
      })(),
    );
    expect(busyExec.code).toBe(Code.ResourceExhausted);
    expect(Number(busyExec.metadata.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(busy.code).toBe(Code.ResourceExhausted);
    expect(Number(busy.metadata.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const put = await tlsFetch(`${https()}/v1/namespaces/${ns.name}/runs/box/files/busy.txt`, {
      method: "PUT",
      body: "x",
      headers: { authorization: `Bearer ${tokens.caller}` },
    });
    expect(put.status).toBe(429);
    expect(Number(put.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await c.cancelOperation({ target: target(), operationId: opId }, as("caller"))).cancelled).toBe(
      true,
    );
    let out = "";
    for (let r = await queued.next(); !r.done; r = await queued.next())
      if (r.value.event.case === "output") out += dec.decode(r.value.event.value.data);
    expect(out).toBe("queued\n");
    for (let r = await blocker.next(); !r.done; r = await blocker.next());
  });
});
