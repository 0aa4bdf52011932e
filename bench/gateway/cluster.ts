/**
 * The gateway benchmark on a real cluster: python and bash function Runs on the real runtimed +
 * Runtime Server, a real gateway process (its own ServiceAccount, real TokenReview and
 * SubjectAccessReview — cached after the first call, as in production — the route from its
 * informers), called over plain HTTP, Connect JSON, Connect binary and gRPC (h2c); next to the
 * floors measured in the same run: the same Runs called on runtimed's dataplane port directly the
 * way the gateway calls it (Connect binary over Bun fetch, fenced, with the gateway's dataplane
 * token), and a plain Bun echo server in its own process. Rounds outermost, concurrency next,
 * targets innermost, so a burst of other work on the machine lands on every target alike.
 *
 * Setup needs the local cluster (the controller runs from this checkout with the real runtimed):
 * KRT_CLUSTER_DIR and KUBECONFIG set (see main.ts).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Run, RunResource, type Runtime } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import { startController } from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, getRuntime, installCrds } from "../../controller/testing/cluster/objects.ts";
import {
  type Caller,
  directCaller,
  type GatewayProtocol,
  gatewayCaller,
} from "../../gateway/testing/callers.ts";
import { startGatewayProcess } from "../../gateway/testing/gateway-process.ts";
import { eventually, testNamespace } from "../../test/support/cluster.ts";
import {
  createGatewayRbac,
  createServiceAccount,
  deleteGatewayRbac,
  gatewayFiles,
  grantRuns,
  saToken,
} from "../../test/support/gateway.ts";
import { imageRuntime } from "../../test/support/runtimes.ts";
import { type BenchOptions, PROTOCOLS, type Row } from "./bench.ts";
import { runLoad } from "./load.ts";

export type Lang = "python" | "bash";

const SOURCES: Record<Lang, string> = {
  python: "def handle(request):\n    return request.body\n",
  bash: "handle() { cat; }\n",
};

export interface ClusterBenchOptions extends BenchOptions {
  kubeconfig: string;
  client: KubeClient;
  /** Workers per function Run (spec.mode.function.concurrency). */
  workers: number;
  rounds: number;
  langs: Lang[];
  protocols?: GatewayProtocol[];
  log?: (line: string) => void;
}

/** A one-pod Runtime of `image`, room for 8 Runs. */
const runtime = (name: string, image: string): Runtime => imageRuntime(name, image, { replicas: 1 });

/** A one-file Bun server in its own process; it prints its port. */
async function startBunProcess(code: string): Promise<{ port: number; stop(): void }> {
  const child = Bun.spawn(["bun", "-e", code], { stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the echo server exited before printing its port");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { port: Number(text.trim()), stop: () => child.kill() };
}

export interface ClusterRow extends Row {
  round: number;
  lang: Lang | "-";
  target: string;
  /**
   * Gateway cells: mean µs per call inside the gateway's Invoker (auth decision cache, route,
   * limits, metrics) beyond its dataplane call: its request-duration histogram minus its
   * dataplane-duration histogram over the cell, from /metrics. Decoding and encoding the caller's
   * protocol happen outside it; the rest of the added latency is those and the extra hop.
   */
  inGatewayMeanUs?: number;
}

/** Sums of the gateway's request and dataplane duration histograms (all labels), from /metrics. */
async function scrapeDurations(metricsPort: number): Promise<{ req: number; dp: number; n: number }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const sum = (name: string) =>
    text
      .split("\n")
      .filter((l) => l.startsWith(name))
      .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
  return {
    req: sum("kruntimes_gateway_request_duration_seconds_sum"),
    dp: sum("kruntimes_gateway_dataplane_duration_seconds_sum"),
    n: sum("kruntimes_gateway_request_duration_seconds_count"),
  };
}

/** Sets everything up, measures, tears everything down; returns one row per round × cell. */
export async function benchCluster(o: ClusterBenchOptions): Promise<ClusterRow[]> {
  const { client } = o;
  const log = o.log ?? console.log;
  const protocols = o.protocols ?? PROTOCOLS;
  await installCrds(client);
  const ns = await testNamespace(client, "krt-bench-gw");
  const dir = mkdtempSync(join(tmpdir(), "krt-bench-gw-"));
  const role = `krt-bench-gateway-${ns.name}`;
  const ctl = startController({
    namespace: ns.name,
    kubeconfig: o.kubeconfig,
    runtimed: "real",
    flags: [`--dataplane-subjects=system:serviceaccount:${ns.name}:gateway`],
  });
  const stops: (() => void | Promise<void>)[] = [];
  try {
    await ctl.waitFor("scheduling and reconciling");
    // The gateway's ServiceAccount with the chart's least-privilege ClusterRole; a caller allowed
    // to invoke the two Runs.
    await createGatewayRbac(client, ns.name, role);
    await createServiceAccount(client, ns.name, "caller");
    await grantRuns(client, ns.name, "invoke", "caller", "invoke", [...o.langs]);
    const callerToken = await saToken(client, ns.name, "caller");
    const files = await gatewayFiles(client, ns.name, o.kubeconfig, dir);
    const dataplaneToken = readFileSync(files.dataplaneTokenFile, "utf8");

    for (const lang of o.langs)
      await createRuntime(client, ns.name, runtime(lang, `ghcr.io/kruntimes/${lang}`));
    for (const lang of o.langs)
      await eventually(
        `Runtime ${lang} available`,
        async () => (await getRuntime(client, ns.name, lang)).status?.availableReplicas === 1,
        120_000,
      );
    const runs: Partial<Record<Lang, Run>> = {};
    for (const lang of o.langs) {
      await client.create(path(RunResource, ns.name), {
        apiVersion: "kruntimes.io/v1alpha1",
        kind: "Run",
        metadata: { name: lang },
        spec: {
          runtime: lang,
          source: { inline: SOURCES[lang] },
          mode: { function: { handler: "handle", concurrency: o.workers } },
        },
      });
      runs[lang] = await eventually(
        `${lang} function Ready`,
        async () => {
          const r = await client.get<Run>(path(RunResource, ns.name, lang));
          if (r.status?.phase === "Failed") throw new Error(`${lang}: ${r.status.message}`);
          return r.status?.phase === "Ready" ? r : undefined;
        },
        60_000,
      );
    }

    const gw = await startGatewayProcess(
      [
        ...files.flags,
        "--protocols=http",
        // info: the start line carries the ports; nothing is logged per call at info.
        "--log-level=info",
      ],
      files.env,
    );
    stops.push(async () => {
      gw.kill();
      await gw.exited;
    });
    // The floors: a plain Bun.serve echo (any HTTP round trip here), and the same echo behind a
    // bare Bun.serve → fetch proxy in its own process (what one more Bun hop costs on this
    // machine, with no gateway logic at all).
    const echo = await startBunProcess(
      `const s = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, async fetch(r) { return new Response(await r.arrayBuffer(), { headers: { "content-type": "application/json" } }); } }); console.log(s.port);`,
    );
    stops.push(() => echo.stop());
    const proxy = await startBunProcess(
      `const s = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, async fetch(r) { const a = await fetch("http://127.0.0.1:${echo.port}/", { method: "POST", body: await r.arrayBuffer(), headers: { "content-type": "application/json" } }); return new Response(await a.arrayBuffer(), { headers: { "content-type": "application/json" } }); } }); console.log(s.port);`,
    );
    stops.push(() => proxy.stop());

    const body = new TextEncoder().encode(JSON.stringify({ hello: "world", n: 42 }));
    const targets: { lang: Lang | "-"; target: string; caller: Caller }[] = [];
    for (const [target, port] of [
      ["floor: Bun echo", echo.port],
      ["floor: Bun echo via a bare Bun proxy", proxy.port],
    ] as const) {
      const url = `http://127.0.0.1:${port}/`;
      targets.push({
        lang: "-",
        target,
        caller: async () => {
          const r = await fetch(url, {
            method: "POST",
            body,
            headers: { "content-type": "application/json" },
          });
          if ((await r.arrayBuffer()).byteLength !== body.byteLength) throw new Error("wrong answer");
        },
      });
    }
    for (const lang of o.langs) {
      const run = runs[lang] as Run;
      const e = run.status?.endpoint;
      if (!e) throw new Error(`${lang}: Ready without status.endpoint`);
      let address = e.address;
      if (!address) {
        // Before runtimed wrote status.endpoint.address: the pod's IP and the default port.
        const pod = await client.get<{ status: { podIP: string } }>(path(R.pods, ns.name, e.pod));
        address = `${pod.status.podIP}:8444`;
      }
      targets.push({
        lang,
        target: "floor: runtimed direct (connect-binary)",
        caller: directCaller({
          address,
          token: dataplaneToken,
          fence: {
            namespace: ns.name,
            runName: lang,
            runUid: run.metadata.uid ?? "",
            podUid: e.podUID,
            attempt: e.attempt,
          },
          body,
          contentType: "application/json",
        }),
      });
      for (const p of protocols)
        targets.push({
          lang,
          target: `gateway ${p}`,
          caller: gatewayCaller(
            p,
            { http: gw.ports.http, grpc: gw.ports.grpc },
            {
              namespace: ns.name,
              run: lang,
              token: callerToken,
              body,
              contentType: "application/json",
            },
          ),
        });
    }
    // One call each before measuring: auth decisions cached, connections open, workers warm.
    for (const t of targets) await t.caller();

    const rows: ClusterRow[] = [];
    for (let round = 1; round <= o.rounds; round++)
      for (const concurrency of o.concurrency)
        for (const t of targets) {
          const m0 = await scrapeDurations(gw.ports.metrics);
          const r = await runLoad(t.caller, { concurrency, durationMs: o.durationMs, warmupMs: o.warmupMs });
          const m1 = await scrapeDurations(gw.ports.metrics);
          const inGatewayMeanUs =
            m1.n > m0.n ? ((m1.req - m0.req - (m1.dp - m0.dp)) / (m1.n - m0.n)) * 1e6 : undefined;
          const row = {
            round,
            lang: t.lang,
            target: t.target,
            path: `${t.lang} ${t.target}`,
            ...r,
            ...(inGatewayMeanUs !== undefined ? { inGatewayMeanUs } : {}),
          };
          rows.push(row);
          log(
            `round ${round} c=${String(concurrency).padEnd(3)} ${t.lang.padEnd(6)} ${t.target.padEnd(40)} p50 ${(r.p50 / 1000).toFixed(3)} ms  p99 ${(r.p99 / 1000).toFixed(3)} ms  ${Math.round(r.rps)}/s  errors ${r.errors}${inGatewayMeanUs !== undefined ? `  in-gateway ${(inGatewayMeanUs / 1000).toFixed(3)} ms` : ""}${r.firstError ? ` (${r.firstError.slice(0, 60)})` : ""}`,
          );
        }
    return rows;
  } finally {
    for (const s of stops.reverse()) await s();
    for (const lang of o.langs) await client.delete(path(RunResource, ns.name, lang)).catch(() => {});
    await Bun.sleep(2000);
    ctl.kill();
    await ctl.exited;
    await ns.remove();
    await deleteGatewayRbac(client, role);
  }
}

/** Median of each measure over the rounds, one row per (lang, target, concurrency). */
export function medians(rows: ClusterRow[]): ClusterRow[] {
  const groups = new Map<string, ClusterRow[]>();
  for (const r of rows) {
    const k = `${r.lang}\u0000${r.target}\u0000${r.concurrency}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const med = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor((s.length - 1) / 2)] as number;
  };
  return [...groups.values()].map((g) => {
    const f = g[0] as ClusterRow;
    return {
      ...f,
      round: 0,
      calls: g.reduce((a, r) => a + r.calls, 0),
      errors: g.reduce((a, r) => a + r.errors, 0),
      rps: med(g.map((r) => r.rps)),
      p50: med(g.map((r) => r.p50)),
      p95: med(g.map((r) => r.p95)),
      p99: med(g.map((r) => r.p99)),
      ...(f.inGatewayMeanUs !== undefined
        ? { inGatewayMeanUs: med(g.map((r) => r.inGatewayMeanUs ?? 0)) }
        : {}),
    };
  });
}
