/**
 * Controller leader failover with the chart's defaults (lease 4s, renew deadline 3s, retry 1s)
 * against Kubernetes' usual 15s/10s/2s, side by side in one run: two controller processes on a
 * fresh namespace; each round SIGKILLs the leader and times until the standby holds the Lease
 * (seen by a watch on it), then stops the new leader gracefully (SIGTERM) and times that handover,
 * restarting the stopped processes as standbys. The steady Lease write rate (renewals per second)
 * is counted from the same watch. The integration test proves the mechanism; speed is measured here.
 * Usage: KUBECONFIG=… bun bench/leader-failover/main.ts [--rounds 3] [--profiles default,k8s]
 */
import { parseArgs } from "node:util";
import { KubeClient, loadKubeconfigFile, path, R, watchStream } from "@kruntimes/kube";
import type { Lease } from "../../controller/kube-types.ts";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import { testNamespace } from "../../test/support/cluster.ts";

const PROFILES: Record<string, string[]> = {
  default: ["--leader-lease-duration=4s", "--leader-renew-deadline=3s", "--leader-retry-period=1s"],
  k8s: ["--leader-lease-duration=15s", "--leader-renew-deadline=10s", "--leader-retry-period=2s"],
};

const kubeconfig = process.env.KUBECONFIG;
if (!kubeconfig) {
  console.error("error: set KUBECONFIG to the cluster to benchmark");
  process.exit(78);
}
const { values } = parseArgs({
  options: { rounds: { type: "string", default: "3" }, profiles: { type: "string", default: "default,k8s" } },
});
const rounds = Number(values.rounds);
const profiles = (values.profiles ?? "").split(",").filter(Boolean);
if (!Number.isInteger(rounds) || rounds < 1 || profiles.some((p) => !PROFILES[p])) {
  console.error(
    `error: --rounds must be a positive integer, --profiles a list of ${Object.keys(PROFILES).join(", ")}`,
  );
  process.exit(64);
}

const client = new KubeClient(loadKubeconfigFile(kubeconfig));
await installCrds(client);

interface Figures {
  sigkillMs: number[];
  gracefulMs: number[];
  writesPerSecond: number;
}

async function measure(profile: string): Promise<Figures> {
  const ns = await testNamespace(client, `krt-bench-leader-${profile}`);
  const procs = new Map<string, ControllerProcess>();
  let seq = 0;
  const start = () => {
    const id = `ctl-${++seq}`;
    procs.set(
      id,
      startController({
        namespace: ns.name,
        kubeconfig: kubeconfig as string,
        flags: [`--identity=${id}`, ...(PROFILES[profile] as string[])],
      }),
    );
    return id;
  };
  // Every version of the Lease, timestamped on arrival.
  const events: { at: number; holder: string; renew: string }[] = [];
  const abort = new AbortController();
  void (async () => {
    const query = { fieldSelector: "metadata.name=kruntimes-controller" };
    while (!abort.signal.aborted) {
      try {
        for await (const ev of watchStream<Lease>(client, path(R.leases, ns.name), query, abort.signal))
          if (ev.type !== "BOOKMARK")
            events.push({
              at: performance.now(),
              holder: ev.object.spec?.holderIdentity ?? "",
              renew: String(ev.object.spec?.renewTime ?? ""),
            });
      } catch {
        await Bun.sleep(100);
      }
    }
  })();
  const holderAfter = async (
    t0: number,
    not: string,
    timeoutMs = 60_000,
  ): Promise<{ id: string; ms: number }> => {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      const e = events.find((x) => x.at >= t0 && x.holder !== "" && x.holder !== not);
      if (e) return { id: e.holder, ms: e.at - t0 };
      await Bun.sleep(10);
    }
    throw new Error(`no new holder within ${timeoutMs} ms`);
  };
  const f: Figures = { sigkillMs: [], gracefulMs: [], writesPerSecond: 0 };
  try {
    const first = start();
    await procs.get(first)?.waitFor("scheduling and reconciling", 60_000);
    start();
    await Bun.sleep(3000);
    // Steady state: count the leader's renewals over 10 s.
    const w0 = performance.now();
    const before = events.length;
    await Bun.sleep(10_000);
    f.writesPerSecond = (events.length - before) / ((performance.now() - w0) / 1000);
    let leader = first;
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      procs.get(leader)?.kill("SIGKILL");
      await procs.get(leader)?.exited;
      procs.delete(leader);
      const next = await holderAfter(t0, leader);
      f.sigkillMs.push(next.ms);
      start();
      await Bun.sleep(2000);
      const t1 = performance.now();
      procs.get(next.id)?.kill("SIGTERM");
      const after = await holderAfter(t1, next.id);
      f.gracefulMs.push(after.ms);
      await procs.get(next.id)?.exited;
      procs.delete(next.id);
      leader = after.id;
      start();
      await Bun.sleep(2000);
      console.log(
        `${profile} round ${i + 1}: SIGKILL → new leader ${next.ms.toFixed(0)} ms; SIGTERM → ${after.ms.toFixed(0)} ms`,
      );
    }
  } finally {
    abort.abort();
    for (const p of procs.values()) {
      p.kill("SIGKILL");
      await p.exited;
    }
    await client.delete(path(R.namespaces, undefined, ns.name)).catch(() => {});
  }
  return f;
}

const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0] ?? 0, median: s[Math.floor(s.length / 2)] ?? 0, max: s.at(-1) ?? 0 };
};
const results: Record<string, Figures> = {};
for (const p of profiles) results[p] = await measure(p);
console.log(
  "\nprofile  | flags                          | SIGKILL failover ms (min/median/max) | SIGTERM handover ms | Lease writes/s",
);
for (const [p, f] of Object.entries(results)) {
  const k = stat(f.sigkillMs);
  const g = stat(f.gracefulMs);
  console.log(
    `${p.padEnd(8)} | ${(PROFILES[p] as string[])
      .map((x) => x.replace("--leader-", ""))
      .join(" ")
      .padEnd(
        30,
      )} | ${k.min.toFixed(0)}/${k.median.toFixed(0)}/${k.max.toFixed(0)} | ${g.min.toFixed(0)}/${g.median.toFixed(0)}/${g.max.toFixed(0)} | ${f.writesPerSecond.toFixed(2)}`,
  );
}
if (results.default && results.k8s)
  console.log(
    `ratio k8s/default SIGKILL median: ${(stat(results.k8s.sigkillMs).median / stat(results.default.sigkillMs).median).toFixed(2)}`,
  );
