/**
 * Session Runs end to end on the local cluster: the controller with the REAL runtimed and the real
 * bash Runtime Server, driven on runtimed's dataplane port directly — as the gateway forwards —
 * with a gateway.v1 SessionService client, a ServiceAccount token (audience kruntimes-dataplane)
 * of an allowed subject and the fence in headers. Every wait is for a state, never for a speed.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { isTerminalPhase, type Run, RunResource, type RunSpec } from "@kruntimes/api";
import type { ExecResponse } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import { ExitReason } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { type KubeClient, path, R } from "@kruntimes/kube";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, installCrds, readyPods } from "../../controller/testing/cluster/objects.ts";
import {
  Code,
  ConnectError,
  type SessionClient,
  sessionClient,
} from "../../runtimed/sessions/session-client.ts";
import { type S3Server, startS3Server } from "../localcluster/s3-server.ts";
import type { ClusterInfo } from "../localcluster/supervisor.ts";
import { eventually, killLocalContainer, testCluster, testNamespace } from "../support/cluster.ts";
import { callerToken, podDataplaneAddress } from "../support/dataplane.ts";
import { imageRuntime } from "../support/runtimes.ts";

const cluster = testCluster();
const suite = cluster?.local ? describe : describe.skip;

setDefaultTimeout(120_000);

const DATAPLANE_PORT = 8444;
const CALLER = "sess-caller";
const AUDIT_USER = "alice@example.com";
const REPLICAS = 3;
const enc = new TextEncoder();
const dec = new TextDecoder();

type Sessions = SessionClient;

suite("session Runs (real runtimed + bash Runtime Server, dataplane port)", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;
  let s3: S3Server;
  let token = "";
  let n = 0;

  async function create(spec: Partial<RunSpec> & { session?: Record<string, unknown> }, name = `s${n++}`) {
    const { session, ...rest } = spec;
    await client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name },
      spec: { runtime: "sess", mode: { session: session ?? {} }, ...rest },
    });
    return name;
  }
  const get = (name: string) => client.get<Run>(path(RunResource, ns.name, name));
  const until = (name: string, what: string, ok: (r: Run) => boolean, timeoutMs = 90_000) =>
    eventually(
      `${name} ${what}`,
      async () => {
        const r = await get(name);
        return ok(r) ? r : undefined;
      },
      timeoutMs,
    );
  const ready = (name: string) => until(name, "Ready", (r) => r.status?.phase === "Ready");
  const ended = (name: string) => until(name, "ended", (r) => isTerminalPhase(r.status?.phase));
  const terminate = (name: string, mode: "Drain" | "Immediate") =>
    client.patch(path(RunResource, ns.name, name), { spec: { termination: { mode } } }, "merge");

  /** A SessionService client routed and fenced the way the gateway does it. */
  async function connect(run: Run): Promise<Sessions> {
    const e = run.status?.endpoint;
    if (!e) throw new Error(`${run.metadata.name} has no endpoint`);
    const base = e.address
      ? `http://${e.address}`
      : await podDataplaneAddress(client, ns.name, e.pod, e.podUID);
    return sessionClient({
      baseUrl: base,
      token,
      fence: { runUid: run.metadata.uid ?? "", podUid: e.podUID, attempt: e.attempt },
      caller: AUDIT_USER,
    });
  }

  const target = (name: string) => ({ namespace: ns.name, run: name });
  const shell = (line: string) => ({ program: { case: "shell" as const, value: line } });

  /** Runs a command to its end; output and the exit. */
  async function exec(c: Sessions, name: string, line: string, timeoutMs = 0) {
    let out = "";
    let exited: Extract<ExecResponse["event"], { case: "exited" }>["value"] | undefined;
    const ids = new Set<string>();
    for await (const ev of c.exec({ target: target(name), command: shell(line), timeoutMs })) {
      ids.add(ev.operationId);
      if (ev.event.case === "output") out += dec.decode(ev.event.value.data);
      if (ev.event.case === "exited") exited = ev.event.value;
    }
    return { out, exited, ids };
  }

  /**
   * Starts an Exec and resolves once runtimed has taken it (its first event: the queued notice or
   * ExecStarted), with the rest of the stream still to come.
   */
  async function begin(c: Sessions, name: string, line: string, timeoutMs = 0, signal?: AbortSignal) {
    const it = c
      .exec({ target: target(name), command: shell(line), timeoutMs }, signal ? { signal } : {})
      [Symbol.asyncIterator]();
    const first = await it.next();
    if (first.done) throw new Error("the Exec stream ended at once");
    const operationId = first.value.operationId;
    const rest = (async () => {
      let exited: Extract<ExecResponse["event"], { case: "exited" }>["value"] | undefined;
      let out = "";
      const evs = [first.value];
      for (;;) {
        const r = await it.next();
        if (r.done) break;
        evs.push(r.value);
      }
      for (const ev of evs) {
        if (ev.event.case === "output") out += dec.decode(ev.event.value.data);
        if (ev.event.case === "exited") exited = ev.event.value;
      }
      return { exited, out };
    })();
    rest.catch(() => {});
    return { operationId, queued: first.value.event.case === undefined, rest };
  }

  const codeOf = (p: Promise<unknown>) =>
    p.then(
      () => "ok",
      (e) => Code[ConnectError.from(e).code] as string,
    );

  async function runtimedLog(pod: string): Promise<string> {
    const res = await client.request<Response>("GET", `${path(R.pods, ns.name, pod)}/log`, {
      query: { container: "runtimed" },
      raw: true,
    });
    return res.text();
  }

  /** SIGKILLs a container's process group (on whichever node runs the pod); its agent restarts it. */
  function killContainer(pod: string, container: string): void {
    killLocalContainer(cluster?.local as ClusterInfo, ns.name, pod, container);
  }

  beforeAll(async () => {
    s3 = await startS3Server({ buckets: ["krt"] });
    await installCrds(client);
    ns = await testNamespace(client, "krt-e2e-sess");
    await client.create(path(R.secrets, ns.name), {
      metadata: { name: "s3-creds" },
      stringData: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey },
    });
    ctl = startController({
      namespace: ns.name,
      kubeconfig: cluster?.kubeconfig as string,
      runtimed: "real",
      flags: [
        "--scheduled-start-timeout=30s",
        `--dataplane-port=${DATAPLANE_PORT}`,
        `--dataplane-subjects=system:serviceaccount:${ns.name}:${CALLER}`,
      ],
    });
    await ctl.waitFor("scheduling and reconciling");
    token = await callerToken(client, ns.name, CALLER);
    await createRuntime(
      client,
      ns.name,
      imageRuntime("sess", "ghcr.io/kruntimes/bash", {
        replicas: REPLICAS,
        artifactStore: {
          s3: {
            bucket: "krt",
            prefix: "e2e",
            endpoint: s3.endpoint,
            pathStyle: true,
            region: s3.region,
            credentialsSecretRef: { name: "s3-creds" },
          },
          maxArtifactBytes: 1024 * 1024,
        },
      }),
    );
    await eventually(
      "sess pods ready",
      async () => (await readyPods(client, ns.name, "sess")).length === REPLICAS,
      180_000,
    );
  }, 300_000);

  afterAll(async () => {
    const runs = await client.list<Run>(path(RunResource, ns.name)).catch(() => ({ items: [] as Run[] }));
    await Promise.all(
      runs.items.map((r) => client.delete(path(RunResource, ns.name, r.metadata.name)).catch(() => {})),
    );
    await eventually(
      "Runs deleted",
      async () => (await client.list<Run>(path(RunResource, ns.name))).items.length === 0,
      60_000,
    ).catch(async () => {
      // Leftover finalizers (a runtimed that is gone): drop them so the namespace can go.
      const left = await client.list<Run>(path(RunResource, ns.name));
      for (const r of left.items)
        await client
          .patch(path(RunResource, ns.name, r.metadata.name), { metadata: { finalizers: null } }, "merge")
          .catch(() => {});
    });
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
    await s3?.close();
  }, 120_000);

  test("Ready in one write with an endpoint; exec streams; 20 queued mutations run in arrival order; reads pass a long command; audit records", async () => {
    const name = await create({ env: [{ name: "GREETING", value: "hello" }] });
    const run = await ready(name);
    expect(run.status?.endpoint?.podUID).toBe(run.status?.assignment?.podUID as string);
    expect(run.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
    const c = await connect(run);
    // spec.env is every operation's environment.
    const hello = await exec(c, name, "echo $GREETING; echo oops >&2; exit 3");
    expect(hello.out).toBe("hello\noops\n");
    expect(hello.exited?.reason).toBe(ExitReason.EXITED);
    expect(hello.exited?.exitCode).toBe(3);
    expect(hello.ids.size).toBe(1);

    // FIFO: a blocker runs; 20 appends are queued one after the other (each confirmed queued
    // before the next is sent), then the blocker is cancelled: the file holds 0..19 in order.
    const blocker = await begin(c, name, "sleep 60");
    const queued = [];
    for (let i = 0; i < 20; i++) {
      const op = await begin(c, name, `echo ${i} >> order.txt`);
      expect(op.queued).toBe(true);
      queued.push(op);
    }
    // Reads do not wait behind the queue: the blocker and all 20 are still pending.
    const st = await c.stat({ target: target(name), path: "" });
    expect(st.info?.type).toBeDefined();
    const listed = await c.listFiles({ target: target(name), path: "" });
    expect(listed.entries.some((e) => e.name === "order.txt")).toBe(false);
    expect(
      (await c.cancelOperation({ target: target(name), operationId: blocker.operationId })).cancelled,
    ).toBe(true);
    expect((await blocker.rest).exited?.reason).toBe(ExitReason.CANCELLED);
    for (const q of queued) expect((await q.rest).exited?.exitCode).toBe(0);
    const chunks: Uint8Array[] = [];
    for await (const ch of c.readFile({ target: target(name), path: "order.txt" })) chunks.push(ch.data);
    expect(dec.decode(Buffer.concat(chunks))).toBe(`${Array.from({ length: 20 }, (_, i) => i).join("\n")}\n`);

    // Files: write + read back, mkdir, rename, remove.
    await c.writeFile({
      target: target(name),
      path: "d/a.txt",
      uploadId: "u1",
      data: enc.encode("abc"),
      last: true,
      parents: true,
    });
    await c.rename({ target: target(name), from: "d/a.txt", to: "d/b.txt" });
    const back: Uint8Array[] = [];
    for await (const ch of c.readFile({ target: target(name), path: "d/b.txt" })) back.push(ch.data);
    expect(dec.decode(Buffer.concat(back))).toBe("abc");
    expect((await c.remove({ target: target(name), path: "d", recursive: true })).removed).toBe(true);

    // Audit: one record per operation with the caller; output lines with the operation.
    const log = await eventually(
      "audit records",
      async () => {
        const text = await runtimedLog(run.status?.endpoint?.pod ?? "");
        return text.includes('"op":"remove"') ? text : undefined;
      },
      30_000,
    );
    const records = log
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => r.runUID === run.metadata.uid);
    const audits = records.filter((r) => r.audit === true);
    expect(audits.filter((r) => r.op === "exec").length).toBe(22);
    expect(audits.every((r) => r.caller === AUDIT_USER && r.namespace === ns.name && r.attempt === 1)).toBe(
      true,
    );
    expect(audits.find((r) => r.op === "exec" && r.shell === "sleep 60")?.exit).toBe("CANCELLED");
    expect(
      records.some((r) => r.stream === "stdout" && r.line === "hello" && typeof r.operation === "string"),
    ).toBe(true);
    await terminate(name, "Immediate");
    expect((await ended(name)).status?.phase).toBe("Cancelled");
  });

  test("queue full → RESOURCE_EXHAUSTED; a queued operation's timeout → DEADLINE_EXCEEDED; a running one's → TIMEOUT", async () => {
    const name = await create({ session: { maxQueuedOperations: 2 } });
    const c = await connect(await ready(name));
    const blocker = await begin(c, name, "sleep 60");
    const a = await begin(c, name, "true");
    const b = await begin(c, name, "true", 500);
    expect(a.queued && b.queued).toBe(true);
    expect(await codeOf(exec(c, name, "true"))).toBe("ResourceExhausted");
    expect(await codeOf(b.rest)).toBe("DeadlineExceeded");
    await c.cancelOperation({ target: target(name), operationId: blocker.operationId });
    expect((await a.rest).exited?.exitCode).toBe(0);
    const slow = await exec(c, name, "sleep 30", 300);
    expect(slow.exited?.reason).toBe(ExitReason.TIMEOUT);
    await terminate(name, "Immediate");
    await ended(name);
  });

  test("Immediate kills the active command, cancels the queue, refuses later calls → Cancelled", async () => {
    const name = await create({});
    const run = await ready(name);
    const c = await connect(run);
    const active = await begin(c, name, "sleep 60");
    const waiting = await begin(c, name, "touch never");
    await terminate(name, "Immediate");
    const r = await ended(name);
    expect(r.status?.phase).toBe("Cancelled");
    const activeEnd = await active.rest.then(
      (x) => ExitReason[x.exited?.reason ?? 0],
      (e) => Code[ConnectError.from(e).code],
    );
    expect(["CANCELLED", "Canceled", "Unavailable"]).toContain(activeEnd as string);
    expect(await codeOf(waiting.rest)).toBe("Canceled");
    // Refused by runtimed (not served any more), or the spent pod is already going away.
    expect(["FailedPrecondition", "Unknown", "Unavailable"]).toContain(await codeOf(exec(c, name, "true")));
  });

  test("idle timeout → Succeeded IdleTimeout; total timeout → Timeout", async () => {
    // Busy until the lifetime ends: spec.timeout still ends it (the accepted command finishes).
    const total = await create({ timeout: "8s" });
    const c = await connect(await ready(total));
    const busy = await exec(c, total, "sleep 10; echo slept");
    expect(busy.out).toBe("slept\n");
    const doneTotal = await ended(total);
    expect(doneTotal.status?.phase).toBe("Timeout");
    expect(doneTotal.status?.reason).toBe("Timeout");
    // Idle: its Ready lasts 2 s, so the wait is for the end (Ready is seen in the log's condition).
    const idle = await create({ session: { idleTimeout: "2s" } });
    const doneIdle = await ended(idle);
    expect(doneIdle.status?.phase).toBe("Succeeded");
    expect(doneIdle.status?.reason).toBe("IdleTimeout");
    expect(doneIdle.status?.timing?.startedMicros).toBeGreaterThan(0);
  });

  test("Drain → Finalizing (accepted operation finishes) → Succeeded with artifacts; invalid artifacts → Failed", async () => {
    const name = await create({});
    const run = await ready(name);
    const c = await connect(run);
    await exec(c, name, 'echo report > "$KRUNTIME_ARTIFACTS_DIR/report.txt"');
    const running = await begin(c, name, "sleep 3; echo finished > done.txt");
    await terminate(name, "Drain");
    await until(
      name,
      "Finalizing",
      (r) => r.status?.phase === "Finalizing" || isTerminalPhase(r.status?.phase),
    );
    expect(await codeOf(exec(c, name, "true"))).toMatch(/FailedPrecondition/);
    expect((await running.rest).exited?.exitCode).toBe(0);
    const r = await ended(name);
    expect(r.status?.phase).toBe("Succeeded");
    expect(r.status?.reason).toBe("Drained");
    const ref = r.status?.artifactRefs?.find((x) => x.name === "report.txt");
    expect(ref?.location).toBe(`s3://krt/e2e/${ns.name}/${r.metadata.uid}/1/report.txt`);

    const bad = await create({});
    const cb = await connect(await ready(bad));
    await exec(cb, bad, 'ln -s /etc/passwd "$KRUNTIME_ARTIFACTS_DIR/link"');
    await terminate(bad, "Drain");
    const rb = await ended(bad);
    expect(rb.status?.phase).toBe("Failed");
    expect(rb.status?.reason).toBe("ArtifactsRejected");
  });

  test("a store outage during Finalizing is retried; the session ends Succeeded with its artifact after recovery", async () => {
    const name = await create({});
    const run = await ready(name);
    const c = await connect(run);
    await exec(c, name, 'echo kept > "$KRUNTIME_ARTIFACTS_DIR/late.txt"');
    await s3.stop();
    try {
      await terminate(name, "Drain");
      await until(
        name,
        "Finalizing",
        (r) => r.status?.phase === "Finalizing" || isTerminalPhase(r.status?.phase),
      );
      // runtimed exports into the outage: its log shows this Run's upload failing and retried.
      await eventually(
        "runtimed retrying the session's export",
        async () =>
          (await runtimedLog(run.status?.endpoint?.pod ?? ""))
            .split("\n")
            .some((l) => l.includes("artifact store failed; retrying") && l.includes(`"run":"${name}"`)),
        60_000,
      );
      expect(isTerminalPhase((await client.get<Run>(path(RunResource, ns.name, name))).status?.phase)).toBe(
        false,
      );
    } finally {
      await s3.start();
    }
    const r = await ended(name);
    expect(r.status?.phase).toBe("Succeeded");
    expect(r.status?.artifactRefs?.map((x) => x.name)).toContain("late.txt");
  });

  test("a session holds its pod alone; the spent pod is replaced and the next session starts clean", async () => {
    const name = await create({});
    const run = await ready(name);
    const pod = run.status?.endpoint?.pod as string;
    const podUID = run.status?.endpoint?.podUID as string;
    const c = await connect(run);
    await exec(c, name, "echo secret > left.txt");
    // A task placed now never lands on the session's pod.
    await client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name: "beside" },
      spec: { runtime: "sess", mode: { task: {} }, source: { inline: "echo hi" } },
    });
    const task = await ended("beside");
    expect(task.status?.phase).toBe("Succeeded");
    expect(task.status?.assignment?.podUID).not.toBe(podUID);
    await terminate(name, "Drain");
    await ended(name);
    // The pod this session held is deleted (the Deployment refills the pool).
    await eventually(
      "spent pod replaced",
      async () => {
        const p = await client
          .get<{ metadata: { uid: string } }>(path(R.pods, ns.name, pod))
          .catch(() => undefined);
        return !p || p.metadata.uid !== podUID;
      },
      60_000,
    );
    const next = await create({});
    const r2 = await ready(next);
    expect(r2.status?.endpoint?.podUID).not.toBe(podUID);
    const c2 = await connect(r2);
    const listing = await c2.listFiles({ target: target(next), path: "" });
    expect(listing.entries.map((e) => e.name).filter((x) => x !== ".artifacts")).toEqual([]);
    await terminate(next, "Immediate");
    await ended(next);
  });

  test("a session Run deleted while Ready spends its pod too: replaced, never offered to the next session", async () => {
    const name = await create({});
    const run = await ready(name);
    const pod = run.status?.endpoint?.pod as string;
    const podUID = run.status?.endpoint?.podUID as string;
    await client.delete(path(RunResource, ns.name, name));
    await eventually(
      "the Run is gone (session closed, finalizer removed)",
      async () => !(await client.get(path(RunResource, ns.name, name)).catch(() => undefined)),
      60_000,
    );
    await eventually(
      "its pod replaced",
      async () => {
        const p = await client
          .get<{ metadata: { uid: string } }>(path(R.pods, ns.name, pod))
          .catch(() => undefined);
        return !p || p.metadata.uid !== podUID;
      },
      60_000,
    );
    const next = await create({});
    const r2 = await ready(next);
    expect(r2.status?.endpoint?.podUID).not.toBe(podUID);
    await terminate(next, "Immediate");
    await ended(next);
  });

  test("the session's pod deleted → Failed (never re-placed); the pool is refilled", async () => {
    const name = await create({});
    const run = await ready(name);
    const pod = run.status?.endpoint?.pod as string;
    await client.delete(path(R.pods, ns.name, pod));
    const r = await ended(name);
    expect(r.status?.phase).toBe("Failed");
    expect(["PodGone", "PodTerminating", "PodUnhealthy"]).toContain(r.status?.reason as string);
    expect(r.status?.attempt).toBe(1);
    await eventually(
      "pool refilled",
      async () => (await readyPods(client, ns.name, "sess")).length === REPLICAS,
      120_000,
    );
  });

  test("runtimed restarted: the open session is re-adopted without a status write and keeps its state", async () => {
    const name = await create({});
    const run = await ready(name);
    const pod = run.status?.endpoint?.pod as string;
    const c = await connect(run);
    await exec(c, name, "echo kept > state.txt");
    const before = (await get(name)).metadata.resourceVersion;
    killContainer(pod, "runtimed");
    const again = await eventually(
      "runtimed back and serving the session",
      async () => {
        const r = await exec(c, name, "cat state.txt").catch(() => undefined);
        return r?.exited?.exitCode === 0 ? r : undefined;
      },
      90_000,
    );
    expect(again.out).toBe("kept\n");
    const after = await get(name);
    expect(after.status?.phase).toBe("Ready");
    expect(after.metadata.resourceVersion).toBe(before as string);
    await terminate(name, "Immediate");
    await ended(name);
  });

  test("the Runtime Server restarted: the session's state is lost → Failed, never re-opened", async () => {
    const name = await create({});
    const run = await ready(name);
    const pod = run.status?.endpoint?.pod as string;
    killContainer(pod, "runtime");
    const r = await ended(name);
    expect(r.status?.phase).toBe("Failed");
    expect(r.status?.reason).toBe("SessionLost");
    expect(r.status?.message).toContain("lost");
    expect(r.status?.attempt).toBe(1);
  });
});
