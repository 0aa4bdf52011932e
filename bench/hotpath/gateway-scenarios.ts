/**
 * `krt bench --scenario invoke` and `--scenario session`: function and session Runs on the
 * cluster's own Runtimes, measured through the gateway the way `krt invoke` and `krt exec` reach it
 * (krt/gateway/locate.ts), next to the floors that can be measured from here: a plain Bun echo
 * server in this process, runtimed's dataplane port directly (when the caller may mint the
 * gateway's dataplane token and reach the pod IPs), and for sessions the same command as a task Run.
 * The callers are the gateway benchmark's (gateway/testing/callers.ts), the load loop is
 * bench/gateway/load.ts, the session operations are krt's own (krt/gateway/session-client.ts).
 */
import { type Run, RunResource } from "@kruntimes/api";
import { WriteMode } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { type KubeClient, path, R, watchStream } from "@kruntimes/kube";
import {
  type Caller,
  directCaller,
  type GatewayProtocol,
  gatewayCaller,
  startEchoFloor,
} from "../../gateway/testing/callers.ts";
import { GATEWAY_LABEL, type GatewayTarget } from "../../krt/gateway/locate.ts";
import { download, execStream, sessionClient, upload } from "../../krt/gateway/session-client.ts";
import { type LoadResult, runLoad } from "../gateway/load.ts";
import { BenchError } from "./bench-error.ts";
import { type ClusterInfo, clusterInfo, type MachineInfo, machineInfo } from "./machine.ts";
import type { Progress } from "./progress.ts";
import { BENCH_LABEL } from "./runtime-pool.ts";
import { type Summary, summarize } from "./stats.ts";

export const GATEWAY_PROTOCOLS: GatewayProtocol[] = ["http", "connect-json", "connect-binary", "grpc"];
export const DATAPLANE_AUDIENCE = "kruntimes-dataplane";

const ECHO: Record<string, string> = {
  python: "def handle(request):\n    return request.body\n",
  bash: "handle() { cat; }\n",
};

export interface GatewayBenchEnv {
  client: KubeClient;
  progress: Progress;
  signal: AbortSignal;
  /** Where the Runs go: a namespace with the chart's Runtimes (bash, python) and a controller. */
  namespace: string;
  gatewayNamespace: string;
  /** Finds the gateway as `krt invoke` does. */
  locate(): Promise<GatewayTarget>;
  /** The caller's bearer token, when it has one (--token or the kubeconfig's). */
  token?: string;
  /** Told each object made, so the caller can delete them whatever happens. */
  onCreated(kind: "runs" | "serviceaccounts" | "roles" | "rolebindings", name: string): void;
}

export interface InvokeOptions {
  runtimes: string[];
  protocols: GatewayProtocol[];
  concurrency: number[];
  durationMs: number;
  warmupMs: number;
  /** spec.mode.function.concurrency of each function Run. */
  workers: number;
  readyTimeoutMs: number;
}

export interface InvokeRow extends LoadResult {
  runtime: string;
  /** "gateway <protocol>", "runtimed direct (connect-binary)" or "floor: Bun echo (local)". */
  target: string;
}

export interface InvokeResult {
  scenario: "invoke";
  startedAt: string;
  machine: MachineInfo;
  cluster: ClusterInfo;
  namespace: string;
  gateway: { via: string; baseUrl: string };
  options: InvokeOptions;
  /** Function Runs: create → Ready, ms. */
  functions: { runtime: string; run: string; readyMs: number }[];
  /** Why the runtimed-direct rows are missing, when they are. */
  directSkipped?: string;
  /** Latencies in µs. */
  rows: InvokeRow[];
}

export interface SessionOptions {
  runtime: string;
  sessions: number;
  execs: number;
  listEntries: number;
  pageSize: number;
  readyTimeoutMs: number;
}

export interface TimedRun {
  run: string;
  /** create → Ready (sessions) or create → Succeeded (tasks), ms. */
  ms: number;
  /** Writes to the Run seen on a watch from its creation to that phase (ADDED + MODIFIED events). */
  writes: number;
}

export interface SessionResult {
  scenario: "session";
  startedAt: string;
  machine: MachineInfo;
  cluster: ClusterInfo;
  namespace: string;
  gateway: { via: string; baseUrl: string };
  options: SessionOptions;
  sessions: TimedRun[];
  ready: Summary;
  readyWrites: Summary;
  /** `exec echo` through the gateway, ms. */
  exec: Summary;
  /** Write then read of one file through the gateway, ms each. */
  files: { bytes: number; writeMs: number; readMs: number }[];
  listing: { entries: number; pages: number; ms: number };
  /** The same echo as task Runs, create → Succeeded. */
  tasks: TimedRun[];
  task: Summary;
  taskWrites: Summary;
}

const labels = { [BENCH_LABEL]: "true", "app.kubernetes.io/managed-by": "krt-bench" };
const suffix = () => Math.random().toString(36).slice(2, 7);

/** The caller's token: its own, or a bench ServiceAccount allowed to invoke and use its Runs. */
async function callerToken(env: GatewayBenchEnv, names: () => string[]): Promise<string> {
  if (env.token) return env.token;
  const { client, namespace: ns } = env;
  const name = `krt-bench-caller-${suffix()}`;
  await client.create(path(R.serviceAccounts, ns), { metadata: { name, labels } });
  env.onCreated("serviceaccounts", name);
  await client.create(path(R.roles, ns), {
    metadata: { name, labels },
    rules: [
      {
        apiGroups: ["kruntimes.io"],
        resources: ["runs/invoke", "runs/session"],
        verbs: ["create"],
        resourceNames: names(),
      },
    ],
  });
  env.onCreated("roles", name);
  await client.create(path(R.roleBindings, ns), {
    metadata: { name, labels },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
    subjects: [{ kind: "ServiceAccount", name, namespace: ns }],
  });
  env.onCreated("rolebindings", name);
  env.progress.line(`calling as ServiceAccount ${ns}/${name} (the kubeconfig user has no bearer token)`);
  return tokenFor(client, ns, name);
}

/** A TokenRequest for a ServiceAccount (with an audience, e.g. the dataplane's). */
export async function tokenFor(
  client: KubeClient,
  ns: string,
  sa: string,
  audience?: string,
): Promise<string> {
  const tr = await client.create<{ status: { token: string } }>(`${path(R.serviceAccounts, ns, sa)}/token`, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: 3600, ...(audience ? { audiences: [audience] } : {}) },
  });
  return tr.status.token;
}

/**
 * Creates a Run and follows it on a watch (started from a list's resourceVersion taken before the
 * create, so no event is missed) until `done` holds; counts the writes seen on the way.
 */
async function createAndWatch(
  env: GatewayBenchEnv,
  body: Run,
  done: (r: Run) => boolean,
  timeoutMs: number,
): Promise<TimedRun & { object: Run }> {
  const { client, namespace: ns } = env;
  const name = body.metadata.name as string;
  const list = await client.list<Run>(path(RunResource, ns), { fieldSelector: `metadata.name=${name}` });
  const finished = new AbortController();
  // AbortSignal.any also sees an interrupt that came before this call.
  const stop = AbortSignal.any([env.signal, finished.signal, AbortSignal.timeout(timeoutMs)]);
  const t0 = performance.now();
  try {
    await client.create(path(RunResource, ns), body);
    env.onCreated("runs", name);
    let writes = 0;
    let last: Run | undefined;
    try {
      for await (const ev of watchStream<Run>(
        client,
        path(RunResource, ns),
        { fieldSelector: `metadata.name=${name}`, resourceVersion: list.metadata?.resourceVersion },
        stop,
      )) {
        if (ev.type !== "ADDED" && ev.type !== "MODIFIED") continue;
        writes++;
        last = ev.object;
        if (done(last)) return { run: name, ms: performance.now() - t0, writes, object: last };
        const phase = last.status?.phase;
        if (phase === "Failed" || phase === "Succeeded")
          throw new BenchError(
            `run ${name} ended ${phase}${last.status?.message ? `: ${last.status.message}` : ""}`,
            `check it with \`krt describe -n ${ns} ${name}\``,
          );
      }
    } catch (e) {
      if (!stop.aborted || e instanceof BenchError) throw e;
    }
    if (env.signal.aborted) throw env.signal.reason;
    throw new BenchError(
      `run ${name} was not ${body.spec.mode.task ? "Succeeded" : "Ready"} within ${Math.round(timeoutMs / 1000)}s (phase ${last?.status?.phase ?? "none"})`,
      `is the kruntimes controller watching namespace ${ns}, with a Runtime named ${body.spec.runtime}?`,
    );
  } finally {
    finished.abort();
  }
}

function runBody(name: string, runtime: string, mode: Run["spec"]["mode"], inline: string): Run {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name, labels },
    spec: { runtime, ...(inline ? { source: { inline } } : {}), mode },
  } as Run;
}

/** A TCP connect to host:port within `ms`. */
async function dialable(address: string, ms: number): Promise<boolean> {
  const at = address.lastIndexOf(":");
  const host = address.slice(0, at).replace(/^\[|\]$/g, "");
  const port = Number(address.slice(at + 1));
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    Bun.connect({
      hostname: host,
      port,
      socket: {
        open: (s) => {
          s.end();
        },
        data() {},
        error() {},
        connectError() {},
      },
    }).then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(false);
      },
    );
  });
}

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e)).split("\n")[0];

/** The gateway's dataplane token (TokenRequest for its ServiceAccount), or why there is none. */
async function dataplaneToken(env: GatewayBenchEnv): Promise<{ token: string } | { skipped: string }> {
  const { client, gatewayNamespace: gns } = env;
  let sa: string | undefined;
  try {
    const pods = await client.list<{ spec?: { serviceAccountName?: string } }>(path(R.pods, gns), {
      labelSelector: GATEWAY_LABEL,
    });
    sa = pods.items[0]?.spec?.serviceAccountName;
  } catch (e) {
    return { skipped: `cannot list the gateway pods in ${gns} to find its ServiceAccount (${reason(e)})` };
  }
  if (!sa) return { skipped: `no gateway pod in ${gns} names a ServiceAccount` };
  try {
    return { token: await tokenFor(client, gns, sa, DATAPLANE_AUDIENCE) };
  } catch (e) {
    return {
      skipped: `cannot create a token for ServiceAccount ${gns}/${sa} with audience ${DATAPLANE_AUDIENCE} (${reason(e)}); an admin can`,
    };
  }
}

export async function runInvokeBench(env: GatewayBenchEnv, o: InvokeOptions): Promise<InvokeResult> {
  const { progress, namespace: ns } = env;
  const startedAt = new Date().toISOString();
  const names = o.runtimes.map((r) => `krt-bench-${r}-${suffix()}`);
  const token = await callerToken(env, () => names);
  const functions: InvokeResult["functions"] = [];
  const runs: Run[] = [];
  for (const [i, runtime] of o.runtimes.entries()) {
    const name = names[i] as string;
    progress.line(`creating function Run ${ns}/${name} (${runtime} echo) and waiting until Ready`);
    const r = await createAndWatch(
      env,
      runBody(
        name,
        runtime,
        { function: { handler: "handle", concurrency: o.workers } },
        ECHO[runtime] ?? "",
      ),
      (x) => x.status?.phase === "Ready",
      o.readyTimeoutMs,
    );
    functions.push({ runtime, run: name, readyMs: r.ms });
    runs.push(r.object);
  }
  const target = await env.locate();
  progress.line(`gateway: ${target.via} (${target.baseUrl})`);
  const dp = await dataplaneToken(env);
  let directSkipped = "skipped" in dp ? dp.skipped : undefined;
  const body = new TextEncoder().encode(JSON.stringify({ hello: "world", n: 42 }));
  const echo = startEchoFloor();
  const targets: { runtime: string; target: string; caller: Caller }[] = [
    { runtime: "-", target: "floor: Bun echo (local)", caller: echo.caller(body) },
  ];
  try {
    for (const [i, runtime] of o.runtimes.entries()) {
      const run = runs[i] as Run;
      const e = run.status?.endpoint;
      if ("token" in dp && e) {
        let address = e.address;
        if (!address) {
          const pod = await env.client.get<{ status: { podIP: string } }>(path(R.pods, ns, e.pod));
          address = `${pod.status.podIP}:8444`;
        }
        if (await dialable(address, 1500))
          targets.push({
            runtime,
            target: "runtimed direct (connect-binary)",
            caller: directCaller({
              address,
              token: dp.token,
              fence: {
                namespace: ns,
                runName: run.metadata.name as string,
                runUid: run.metadata.uid ?? "",
                podUid: e.podUID,
                attempt: e.attempt,
              },
              body,
              contentType: "application/json",
            }),
          });
        else
          directSkipped ??= `cannot connect to runtimed's dataplane port ${address} from here (pod IPs not reachable)`;
      }
      for (const p of o.protocols)
        targets.push({
          runtime,
          target: `gateway ${p}`,
          caller: gatewayCaller(
            p,
            { httpBase: target.baseUrl, grpcBase: target.baseUrl, tls: target.tls },
            { namespace: ns, run: run.metadata.name as string, token, body, contentType: "application/json" },
          ),
        });
    }
    if (directSkipped) progress.line(`runtimed direct skipped: ${directSkipped}`);
    // One call each first: auth decisions cached, connections open, workers warm.
    for (const t of targets)
      await t.caller().catch((e) => {
        throw new BenchError(`${t.runtime} ${t.target}: the first call failed: ${reason(e)}`);
      });
    const rows: InvokeRow[] = [];
    const cells = o.concurrency.length * targets.length;
    for (const concurrency of o.concurrency)
      for (const t of targets) {
        if (env.signal.aborted) throw env.signal.reason;
        progress.update(
          `[${rows.length + 1}/${cells}] c=${concurrency} ${t.runtime} ${t.target} (${Math.round(o.durationMs / 1000)}s)`,
        );
        const r = await runLoad(t.caller, { concurrency, durationMs: o.durationMs, warmupMs: o.warmupMs });
        rows.push({ runtime: t.runtime, target: t.target, ...r });
        progress.line(
          `c=${String(concurrency).padEnd(3)} ${t.runtime.padEnd(6)} ${t.target.padEnd(34)} p50 ${ms(r.p50 / 1000)} ms  p99 ${ms(r.p99 / 1000)} ms  ${Math.round(r.rps)}/s${r.errors ? `  errors ${r.errors} (${(r.firstError ?? "").slice(0, 60)})` : ""}`,
        );
      }
    return {
      scenario: "invoke",
      startedAt,
      machine: machineInfo(),
      cluster: await clusterInfo(env.client),
      namespace: ns,
      gateway: { via: target.via, baseUrl: target.baseUrl },
      options: o,
      functions,
      ...(directSkipped ? { directSkipped } : {}),
      rows,
    };
  } finally {
    echo.stop();
    target.close();
  }
}

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(x < 10 ? 2 : 1) : "-");

export async function runSessionBench(env: GatewayBenchEnv, o: SessionOptions): Promise<SessionResult> {
  const { progress, namespace: ns } = env;
  const startedAt = new Date().toISOString();
  const names = Array.from({ length: o.sessions }, (_, i) => `krt-bench-session-${i}-${suffix()}`);
  const token = await callerToken(env, () => names);
  // The task Runs first: a session holds its pod alone and the pod is replaced after it.
  const tasks: TimedRun[] = [];
  for (let i = 0; i < o.sessions; i++) {
    progress.update(`task Run ${i + 1}/${o.sessions}: create → Succeeded`);
    const r = await createAndWatch(
      env,
      runBody(`krt-bench-task-${i}-${suffix()}`, o.runtime, { task: {} }, "echo hi"),
      (x) => x.status?.phase === "Succeeded",
      o.readyTimeoutMs,
    );
    tasks.push({ run: r.run, ms: r.ms, writes: r.writes });
  }
  progress.line(`${o.sessions} task Runs Succeeded (p50 ${ms(summarize(tasks.map((s) => s.ms)).p50)} ms)`);
  const sessions: TimedRun[] = [];
  const ops = async (
    run: string,
  ): Promise<
    Omit<
      SessionResult,
      | "sessions"
      | "ready"
      | "readyWrites"
      | "tasks"
      | "task"
      | "taskWrites"
      | "scenario"
      | "startedAt"
      | "machine"
      | "cluster"
      | "namespace"
      | "options"
    >
  > => {
    const target = await env.locate();
    progress.line(`gateway: ${target.via} (${target.baseUrl})`);
    try {
      const client = sessionClient(target);
      const t = { namespace: ns, run, token };
      const echo = async () => {
        const last = await execStream(
          client,
          t,
          { argv: ["echo", "hi"], env: {}, workingDir: "", timeoutMs: 0 },
          () => {},
        );
        if (last?.event.case !== "exited" || last.event.value.exitCode !== 0)
          throw new BenchError(`exec echo in ${t.run} did not exit 0`);
      };
      await echo();
      const execs: number[] = [];
      for (let i = 0; i < o.execs; i++) {
        if (env.signal.aborted) throw env.signal.reason;
        progress.update(`exec echo ${i + 1}/${o.execs}`);
        const t0 = performance.now();
        await echo();
        execs.push(performance.now() - t0);
      }
      progress.line(`exec echo ×${o.execs}: p50 ${ms(summarize(execs).p50)} ms`);
      const files: SessionResult["files"] = [];
      for (const bytes of [1024, 16 * 1024 * 1024]) {
        const data = new Uint8Array(bytes).map((_, i) => i & 0xff);
        const file = `krt-bench-${bytes}.bin`;
        progress.update(`write + read ${bytes} bytes`);
        const w0 = performance.now();
        await upload(
          client,
          t,
          file,
          (async function* () {
            yield data;
          })(),
          { mode: WriteMode.TRUNCATE, parents: true },
        );
        const writeMs = performance.now() - w0;
        let got = 0;
        const r0 = performance.now();
        await download(client, t, file, (c) => {
          got += c.byteLength;
        });
        const readMs = performance.now() - r0;
        if (got !== bytes) throw new BenchError(`read back ${got} of ${bytes} bytes of ${file}`);
        files.push({ bytes, writeMs, readMs });
        progress.line(`${bytes} bytes: write ${ms(writeMs)} ms, read ${ms(readMs)} ms`);
      }
      progress.update(`creating ${o.listEntries} entries to list`);
      const made = await execStream(
        client,
        t,
        {
          shell: `mkdir -p krt-bench-list && cd krt-bench-list && seq -f 'f%05g' 1 ${o.listEntries} | xargs touch`,
          env: {},
          workingDir: "",
          timeoutMs: 0,
        },
        () => {},
      );
      if (made?.event.case !== "exited" || made.event.value.exitCode !== 0)
        throw new BenchError(`creating ${o.listEntries} files in ${t.run} failed`);
      let entries = 0;
      let pages = 0;
      let pageToken = "";
      const l0 = performance.now();
      do {
        const page = await client.listFiles(
          { target: { namespace: ns, run: t.run }, path: "krt-bench-list", limit: o.pageSize, pageToken },
          { headers: { authorization: `Bearer ${token}` } },
        );
        entries += page.entries.length;
        pages++;
        pageToken = page.nextPageToken;
      } while (pageToken);
      const listing = { entries, pages, ms: performance.now() - l0 };
      progress.line(`listed ${entries} entries in ${pages} pages: ${ms(listing.ms)} ms`);
      return {
        gateway: { via: target.via, baseUrl: target.baseUrl },
        exec: summarize(execs),
        files,
        listing,
      };
    } finally {
      target.close();
    }
  };
  let measured: Awaited<ReturnType<typeof ops>> | undefined;
  for (const name of names) {
    if (env.signal.aborted) throw env.signal.reason;
    progress.update(`session ${sessions.length + 1}/${o.sessions}: create → Ready`);
    const r = await createAndWatch(
      env,
      runBody(name, o.runtime, { session: { idleTimeout: "10m" } }, ""),
      (x) => x.status?.phase === "Ready",
      o.readyTimeoutMs,
    );
    sessions.push({ run: r.run, ms: r.ms, writes: r.writes });
    progress.line(`session ${name}: Ready in ${ms(r.ms)} ms (${r.writes} Run writes seen)`);
    measured ??= await ops(name);
    await endSession(env, r.object, o.readyTimeoutMs);
  }
  return {
    scenario: "session",
    startedAt,
    machine: machineInfo(),
    cluster: await clusterInfo(env.client),
    namespace: ns,
    options: o,
    sessions,
    ready: summarize(sessions.map((s) => s.ms)),
    readyWrites: summarize(sessions.map((s) => s.writes)),
    ...(measured as Awaited<ReturnType<typeof ops>>),
    tasks,
    task: summarize(tasks.map((s) => s.ms)),
    taskWrites: summarize(tasks.map((s) => s.writes)),
  };
}

/**
 * Deletes a session Run and waits until it is gone (its pod released), so the next session's
 * create → Ready does not wait for this one's end.
 */
async function endSession(env: GatewayBenchEnv, run: Run, timeoutMs: number): Promise<void> {
  const { client, namespace: ns } = env;
  const name = run.metadata.name as string;
  await client.delete(path(RunResource, ns, name)).catch(() => {});
  const deadline = Date.now() + timeoutMs;
  env.progress.update(`waiting until session ${name} is gone`);
  for (;;) {
    if (env.signal.aborted) throw env.signal.reason;
    const left = await client.get<Run>(path(RunResource, ns, name)).catch(() => undefined);
    if (!left) return;
    if (Date.now() > deadline) throw new BenchError(`the session Run ${name} was not gone in time`);
    await Bun.sleep(100);
  }
}

/** Deletes what the scenario made, by name (best effort). */
export async function deleteGatewayBenchObjects(
  client: KubeClient,
  ns: string,
  made: { kind: "runs" | "serviceaccounts" | "roles" | "rolebindings"; name: string }[],
): Promise<void> {
  const res = {
    runs: RunResource,
    serviceaccounts: R.serviceAccounts,
    roles: R.roles,
    rolebindings: R.roleBindings,
  };
  await Promise.all(made.map((m) => client.delete(path(res[m.kind], ns, m.name)).catch(() => {})));
}

const f2 = (x: number) => ms(x);

function machineLine(m: MachineInfo, c: ClusterInfo): string {
  return `${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.os}, Bun ${m.bun}, load ${m.loadAverage.join(" / ")}; cluster ${c.server} ${c.version ?? ""}`;
}

export function renderInvoke(r: InvokeResult, md = false): string {
  const head = ["runtime", "target", "c", "p50 ms", "p95 ms", "p99 ms", "req/s", "calls", "errors"];
  const body = r.rows.map((x) => [
    x.runtime,
    x.target,
    String(x.concurrency),
    f2(x.p50 / 1000),
    f2(x.p95 / 1000),
    f2(x.p99 / 1000),
    String(Math.round(x.rps)),
    String(x.calls),
    String(x.errors),
  ]);
  const lines = [
    `${md ? "# " : ""}krt bench --scenario invoke (${r.startedAt})`,
    "",
    `machine: ${machineLine(r.machine, r.cluster)}`,
    `gateway: ${r.gateway.via} (${r.gateway.baseUrl}); namespace ${r.namespace}`,
    `functions (create → Ready): ${r.functions.map((f) => `${f.runtime} ${ms(f.readyMs)} ms`).join(", ")}`,
    `each cell: ${Math.round(r.options.durationMs / 1000)}s after ${r.options.warmupMs} ms warm-up; ${r.options.workers} workers per function`,
    ...(r.directSkipped ? [`runtimed direct: skipped: ${r.directSkipped}`] : []),
    "",
    ...table(head, body, md),
  ];
  return `${lines.join("\n")}\n`;
}

export function renderSession(r: SessionResult, md = false): string {
  const s = (x: Summary) => `p50 ${ms(x.p50)}  p95 ${ms(x.p95)}  max ${ms(x.max)}`;
  const lines = [
    `${md ? "# " : ""}krt bench --scenario session (${r.startedAt})`,
    "",
    `machine: ${machineLine(r.machine, r.cluster)}`,
    `gateway: ${r.gateway.via} (${r.gateway.baseUrl}); namespace ${r.namespace}; runtime ${r.options.runtime}`,
    "",
    ...table(
      ["measure", "n", "result (ms unless said)"],
      [
        ["session create → Ready", String(r.ready.n), s(r.ready)],
        [
          "  Run writes seen (create → Ready)",
          String(r.readyWrites.n),
          s(r.readyWrites).replaceAll(".00", ""),
        ],
        ["exec echo through the gateway", String(r.exec.n), s(r.exec)],
        ...r.files.flatMap((f) => [
          [`write ${bytes(f.bytes)}`, "1", ms(f.writeMs)],
          [`read ${bytes(f.bytes)}`, "1", ms(f.readMs)],
        ]),
        [
          `list ${r.listing.entries} entries (${r.listing.pages} pages of ≤ ${r.options.pageSize})`,
          "1",
          ms(r.listing.ms),
        ],
        ["task Run echo create → Succeeded", String(r.task.n), s(r.task)],
        [
          "  Run writes seen (create → Succeeded)",
          String(r.taskWrites.n),
          s(r.taskWrites).replaceAll(".00", ""),
        ],
      ],
      md,
    ),
  ];
  return `${lines.join("\n")}\n`;
}

const bytes = (n: number) => (n >= 1024 * 1024 ? `${n / 1024 / 1024} MiB` : `${n / 1024} KiB`);

function table(head: string[], rows: string[][], md: boolean): string[] {
  if (md)
    return [
      `| ${head.join(" | ")} |`,
      `|${head.map(() => " --- ").join("|")}|`,
      ...rows.map((r) => `| ${r.join(" | ")} |`),
    ];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(w[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [fmt(head), ...rows.map(fmt)];
}
