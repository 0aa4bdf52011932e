#!/usr/bin/env bun
/**
 * Session Runs on the local cluster (real controller, real runtimed and bash Runtime Server, pods
 * as host processes), called on runtimed's dataplane port as the gateway forwards:
 * - create → Ready: wall time, and the Run's writes after create seen by a watch (bind, the
 *   finalizer patch, the Ready write) — the apiserver round trips the session costs;
 * - `exec echo` latency p50/p95 (sequential);
 * - WriteFile + ReadFile of 1 KiB and 16 MiB (1 MiB chunks);
 * - ListFiles of 10,000 entries in pages of the maximum (1000) and of 100;
 * - the same `echo` as a task Run (create → Succeeded), in the same run, for comparison.
 * `KRT_CLUSTER_DIR=/tmp/krt-x KUBECONFIG=/tmp/krt-x/admin.kubeconfig bun bench/session/main.ts
 * [--execs 300] [--sessions 5]`. Prints a Markdown report (recorded in bench/results/).
 */
import { parseArgs } from "node:util";
import { type Run, RunResource } from "@kruntimes/api";
import { path } from "@kruntimes/kube";
import { startController } from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, installCrds, readyPods } from "../../controller/testing/cluster/objects.ts";
import { type SessionClient, sessionClient } from "../../runtimed/sessions/session-client.ts";
import { eventually, testCluster, testNamespace } from "../../test/support/cluster.ts";
import { createServiceAccount, DATAPLANE_AUDIENCE, saToken } from "../../test/support/gateway.ts";
import { imageRuntime } from "../../test/support/runtimes.ts";
import { machineInfo } from "../hotpath/machine.ts";

const { values: args } = parseArgs({
  options: {
    execs: { type: "string", default: "300" },
    sessions: { type: "string", default: "5" },
    tasks: { type: "string", default: "5" },
  },
});
const EXECS = Number(args.execs);
const SESSIONS = Number(args.sessions);
const TASKS = Number(args.tasks);

const cluster = testCluster();
if (!cluster?.local) {
  console.error("needs the local cluster: set KRT_CLUSTER_DIR and KUBECONFIG");
  process.exit(2);
}
const client = cluster.client;
const CALLER = "bench-caller";

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const f = (ms: number) => ms.toFixed(2);

await installCrds(client);
const ns = await testNamespace(client, "krt-bench-sess");
const ctl = startController({
  namespace: ns.name,
  kubeconfig: cluster.kubeconfig,
  runtimed: "real",
  flags: [`--dataplane-port=8444`, `--dataplane-subjects=system:serviceaccount:${ns.name}:${CALLER}`],
});
try {
  await ctl.waitFor("scheduling and reconciling");
  await createServiceAccount(client, ns.name, CALLER);
  const token = await saToken(client, ns.name, CALLER, DATAPLANE_AUDIENCE);
  const REPLICAS = 2;
  await createRuntime(
    client,
    ns.name,
    imageRuntime("bash", "ghcr.io/kruntimes/bash", { replicas: REPLICAS }),
  );
  const poolFull = () =>
    eventually(
      "pool full",
      async () => (await readyPods(client, ns.name, "bash")).length === REPLICAS,
      180_000,
    );
  await poolFull();

  const get = (name: string) => client.get<Run>(path(RunResource, ns.name, name));
  const until = (name: string, ok: (r: Run) => boolean) =>
    eventually(
      name,
      async () => {
        const r = await get(name);
        return ok(r) ? r : undefined;
      },
      120_000,
    );

  /** Creates a Run and watches it: ms to `done`, and the writes (resourceVersions) after create. */
  async function timed(name: string, spec: Record<string, unknown>, done: (r: Run) => boolean) {
    const seen = new Set<string>();
    const ac = new AbortController();
    const t0 = performance.now();
    const created = await client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name },
      spec,
    });
    let doneMs = 0;
    let final: Run | undefined;
    const watch = (async () => {
      const res = await client.request<Response>("GET", path(RunResource, ns.name), {
        query: {
          watch: "true",
          fieldSelector: `metadata.name=${name}`,
          resourceVersion: created.metadata.resourceVersion ?? "0",
        },
        raw: true,
        signal: ac.signal,
      } as never);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) return;
        buf += dec.decode(value, { stream: true });
        let i = buf.indexOf("\n");
        while (i >= 0) {
          const ev = JSON.parse(buf.slice(0, i)) as { object: Run };
          buf = buf.slice(i + 1);
          i = buf.indexOf("\n");
          seen.add(ev.object.metadata.resourceVersion ?? "");
          if (!doneMs && done(ev.object)) {
            doneMs = performance.now() - t0;
            final = ev.object;
            return;
          }
        }
      }
    })();
    await watch.catch(() => {});
    ac.abort();
    return { ms: doneMs, writes: seen.size, run: final as Run };
  }

  const connect = (run: Run): SessionClient => {
    const e = run.status?.endpoint;
    if (!e?.address) throw new Error("no endpoint address");
    return sessionClient({
      baseUrl: `http://${e.address}`,
      token,
      fence: { runUid: run.metadata.uid ?? "", podUid: e.podUID, attempt: e.attempt },
      caller: "bench",
    });
  };
  const target = (name: string) => ({ namespace: ns.name, run: name });
  const end = async (name: string) => {
    await client.patch(
      path(RunResource, ns.name, name),
      { spec: { termination: { mode: "Immediate" } } },
      "merge",
    );
    await until(name, (r) => r.status?.phase === "Cancelled");
  };

  // create → Ready
  const readies: { ms: number; writes: number }[] = [];
  let main: Run | undefined;
  for (let i = 0; i < SESSIONS; i++) {
    await poolFull();
    const t = await timed(
      `s${i}`,
      { runtime: "bash", mode: { session: {} } },
      (r) => r.status?.phase === "Ready",
    );
    readies.push(t);
    if (i < SESSIONS - 1) await end(`s${i}`);
    else main = t.run;
  }
  const run = main as Run;
  const name = run.metadata.name as string;
  const c = connect(run);

  // exec echo
  const execOnce = async () => {
    const t0 = performance.now();
    for await (const _ of c.exec({
      target: target(name),
      command: { program: { case: "argv", value: { args: ["echo", "hi"] } } },
    })) {
    }
    return performance.now() - t0;
  };
  for (let i = 0; i < 20; i++) await execOnce();
  const execs: number[] = [];
  for (let i = 0; i < EXECS; i++) execs.push(await execOnce());
  const shellOnce = async () => {
    const t0 = performance.now();
    for await (const _ of c.exec({
      target: target(name),
      command: { program: { case: "shell", value: "echo hi" } },
    })) {
    }
    return performance.now() - t0;
  };
  const shells: number[] = [];
  for (let i = 0; i < EXECS; i++) shells.push(await shellOnce());

  // files
  async function writeRead(bytes: number, reps: number) {
    const data = new Uint8Array(bytes).fill(97);
    const chunk = 1024 * 1024;
    const w: number[] = [];
    const r: number[] = [];
    for (let k = 0; k < reps; k++) {
      const t0 = performance.now();
      for (let off = 0; off < bytes || off === 0; off += chunk) {
        const part = data.subarray(off, Math.min(bytes, off + chunk));
        await c.writeFile({
          target: target(name),
          path: `f${bytes}`,
          uploadId: `u${bytes}-${k}`,
          offset: BigInt(off),
          data: part,
          last: off + chunk >= bytes,
        });
        if (off + chunk >= bytes) break;
      }
      w.push(performance.now() - t0);
      const t1 = performance.now();
      let got = 0;
      for await (const ch of c.readFile({ target: target(name), path: `f${bytes}` })) got += ch.data.length;
      if (got !== bytes) throw new Error(`read ${got} of ${bytes}`);
      r.push(performance.now() - t1);
    }
    return { w, r };
  }
  const small = await writeRead(1024, 100);
  const big = await writeRead(16 * 1024 * 1024, 5);

  // list 10,000
  for await (const _ of c.exec({
    target: target(name),
    command: {
      program: {
        case: "shell",
        value: "mkdir -p many && cd many && for i in $(seq 1 10000); do : > f$i; done",
      },
    },
  })) {
  }
  async function listAll(limit: number) {
    const t0 = performance.now();
    let token = "";
    let n = 0;
    let pages = 0;
    do {
      const p = await c.listFiles({ target: target(name), path: "many", limit, pageToken: token });
      n += p.entries.length;
      pages++;
      token = p.nextPageToken;
    } while (token);
    if (n !== 10_000) throw new Error(`listed ${n}`);
    return { ms: performance.now() - t0, pages };
  }
  const list1000 = [await listAll(1000), await listAll(1000), await listAll(1000)];
  const list100 = [await listAll(100), await listAll(100), await listAll(100)];
  await end(name);

  // the same command as a task Run
  const tasks: { ms: number; writes: number }[] = [];
  for (let i = 0; i < TASKS; i++) {
    await poolFull();
    tasks.push(
      await timed(
        `t${i}`,
        { runtime: "bash", mode: { task: {} }, source: { inline: "echo hi" } },
        (r) => r.status?.phase === "Succeeded",
      ),
    );
  }

  const m = machineInfo();
  const med = (xs: number[]) => pct(xs, 50);
  const lines = [
    `# Session Runs — ${new Date().toISOString().slice(0, 10)}`,
    "",
    `Machine: ${JSON.stringify(m)}. Local cluster (pods as host processes), real controller + runtimed + bash Runtime Server; client on the same host calling runtimed's dataplane port (Connect binary, kept-alive HTTP/1.1) — not through the gateway. Parameters: ${SESSIONS} sessions, ${EXECS} sequential execs per variant, ${TASKS} task Runs.`,
    "",
    "| measure | p50 ms | p95 ms | notes |",
    "| --- | --- | --- | --- |",
    `| session create → Ready | ${f(med(readies.map((x) => x.ms)))} | ${f(
      pct(
        readies.map((x) => x.ms),
        95,
      ),
    )} | Run writes after create seen by a watch: ${readies.map((x) => x.writes).join(", ")} (bind, finalizer patch, Ready) |`,
    `| exec \`echo hi\` (argv) | ${f(med(execs))} | ${f(pct(execs, 95))} | at runtimed's port |`,
    `| exec \`echo hi\` (shell line) | ${f(med(shells))} | ${f(pct(shells, 95))} | bash -c |`,
    `| WriteFile 1 KiB | ${f(med(small.w))} | ${f(pct(small.w, 95))} | one chunk, atomic rename |`,
    `| ReadFile 1 KiB | ${f(med(small.r))} | ${f(pct(small.r, 95))} | |`,
    `| WriteFile 16 MiB | ${f(med(big.w))} | ${f(pct(big.w, 95))} | 16 × 1 MiB chunks |`,
    `| ReadFile 16 MiB | ${f(med(big.r))} | ${f(pct(big.r, 95))} | streamed |`,
    `| ListFiles 10,000 entries, limit 1000 | ${f(med(list1000.map((x) => x.ms)))} | — | ${list1000[0]?.pages} pages |`,
    `| ListFiles 10,000 entries, limit 100 | ${f(med(list100.map((x) => x.ms)))} | — | ${list100[0]?.pages} pages |`,
    `| task Run \`echo hi\` create → Succeeded | ${f(med(tasks.map((x) => x.ms)))} | ${f(
      pct(
        tasks.map((x) => x.ms),
        95,
      ),
    )} | Run writes after create: ${tasks.map((x) => x.writes).join(", ")} |`,
    "",
    `Ratio: a task Run's \`echo\` costs ${f(med(tasks.map((x) => x.ms)) / med(execs))}× a session exec (p50).`,
  ];
  console.log(lines.join("\n"));
} finally {
  ctl.kill();
  await ctl.exited;
  await ns.remove();
}
