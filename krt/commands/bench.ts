/** `krt bench`: hot-path latency breakdown, backlog and burst scenarios, with baselines, on any cluster. */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseApiDuration } from "@kruntimes/api";
import { Command, Option } from "clipanion";
import {
  type BenchOptions,
  deleteBenchNamespace,
  deleteBenchObjects,
  runBench,
} from "../../bench/hotpath/bench.ts";
import { BenchError } from "../../bench/hotpath/bench-error.ts";
import {
  deleteGatewayBenchObjects,
  GATEWAY_PROTOCOLS,
  type GatewayBenchEnv,
  renderInvoke,
  renderSession,
  runInvokeBench,
  runSessionBench,
} from "../../bench/hotpath/gateway-scenarios.ts";
import { Progress } from "../../bench/hotpath/progress.ts";
import { renderMarkdown, renderText } from "../../bench/hotpath/report.ts";
import {
  arrivalsText,
  LANGUAGES,
  type RuntimeLanguage,
  SCENARIOS,
  type Scenario,
  scenarioNamed,
} from "../../bench/hotpath/scenarios.ts";
import type { GatewayProtocol } from "../../gateway/testing/callers.ts";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { locateGateway, VIA, type Via } from "../gateway/locate.ts";
import type { GlobalOptions } from "../options.ts";

/** Scenarios through the gateway, on the cluster's own Runtimes; run on their own. */
const GATEWAY_SCENARIOS = ["invoke", "session"] as const;

export class BenchCommand extends KrtCommand {
  static override paths = [["bench"]];
  static override usage = Command.Usage({
    category: "Benchmarks",
    description: "Measure the hot path: a per-Run latency breakdown, throughput and baselines",
    details: `
      Creates a namespace of its own (or, with \`-n\`, works in the given one, e.g. the one a
      namespaced controller watches) and, per scenario, a Runtime (container \`runtime\`, image
      \`ghcr.io/kruntimes/<runtime>\`), waits until every pod is available, creates the Runs (the
      client's µs clock in \`kruntimes.io/created-micros\`) and watches them end. Each Run's
      \`status.timing\` gives schedule (created→scheduled), dispatch (scheduled→started), execution
      (started→finished) and report (finished→reported); the watch adds observe (reported→seen)
      and complete (created→seen). Two parts are shown on their own: create (created→the create's
      response, the start of schedule) and bind-seen (scheduled→the watch sees the bind, the start
      of dispatch). Printed as p50/p95/p99/max in ms, with throughput, the most Runs executing at
      once, the most waiting to be scheduled, and the most waiting while every slot was taken
      (pending at capacity: 0 means Runs waited for the scheduler, not for slots).

      Scenarios: ${SCENARIOS.map((s) => `\`${s.name}\` (${s.runs} Runs, ${arrivalsText(s)}, ${s.pods} pods × ${s.slotsPerPod} slots, ${s.work})`).join("; ")}.
      "Creates in flight": the next Run is created when a create is answered, so Runs overlap;
      "one at a time": the next when the one before was seen ending. \`--runs\`, \`--concurrency\`
      (which makes a scenario's Runs overlap), \`--pods\` and \`--slots\` override every chosen
      scenario.

      Through the gateway (each on its own; the Runs go to \`-n\`, default the gateway's namespace,
      on its Runtimes \`bash\` and \`python\`; the gateway is reached as \`krt invoke\` reaches it):
      \`invoke\` creates an echo function Run per \`--runtime\` (default python,bash), waits Ready,
      and measures p50/p95/p99 and requests/s per \`--protocol\` (http, connect-json, connect-binary,
      grpc) and \`--concurrency\` (default 1,16,64; closed loops for \`--duration\`, default 10s),
      next to a plain Bun echo server run here and runtimed's dataplane port called directly — the
      latter only when the caller may create a token for the gateway's ServiceAccount (audience
      kruntimes-dataplane) and reach the pod IPs, otherwise a note says why it is skipped.
      \`session\` measures session Runs' create → Ready (and the Run writes seen on a watch on the
      way), \`exec echo\` p50/p95 through the gateway, write + read of 1 KiB and 16 MiB, a listing of
      10,000 entries in pages, and the same echo as task Runs (create → Succeeded). The caller's
      bearer token is used (\`--token\`, else the kubeconfig's); without one, krt bench makes a
      ServiceAccount allowed to use just its Runs. Its Runs (and that ServiceAccount) are deleted
      at the end, also on Ctrl-C.

      Baselines, in the same run and namespace: the apiserver write ceiling (ConfigMap creates +
      patches with the same client and concurrency; Runs/s is compared with ceiling ÷ 3 writes per
      Run); the Run write ceiling (the hot path's three writes — create, a bind-shaped and a
      finish-shaped status patch — on Run objects, back to back, at the busiest scenario's
      concurrency; each noop scenario's Runs/s is given as a share of it ÷ 3); the Run-shaped
      floor (the same three writes chained, each sent when a separate watch has seen the one
      before, chains arriving as the scenarios' Runs do — one chain at a time, and each
      scenario's creates in flight, each chain then on its own — in 3 rounds, samples pooled: the
      least a Run's complete can take under that load; each scenario's complete p50/p95 is given
      as a ratio to the floor of the same arrivals; its Runs name a Runtime that does not exist and are never assigned, so no
      controller touches them); and one Kubernetes Job per task (image \`bash\`, \`bash -c true\`,
      create → Complete by watch). \`--no-ceiling\` skips both ceilings, \`--no-floor\` the floor. Progress goes to stderr. What it created is deleted at the end, also on Ctrl-C (exit
      130), unless \`--keep\`: the namespace it made, or in a given namespace everything labelled
      \`kruntimes.io/bench\`. Exits 83 when a Run or Job did not succeed.
    `,
    examples: [
      ["The hot path on bash", "krt bench"],
      ["All scenarios on python, as JSON", "krt bench --scenario all --runtime python -o json"],
      ["The hot path on both runtimes", "krt bench --runtime bash,python"],
      ["Record results for the repository", "krt bench --scenario all --record bench/results"],
      ["Function invoke through the gateway", "krt bench --scenario invoke"],
      [
        "One runtime, two protocols, short cells",
        "krt bench --scenario invoke --runtime python --protocol http,grpc --concurrency 1,16 --duration 5s",
      ],
      ["Sessions through the gateway", "krt bench --scenario session --record bench/results"],
      [
        "A tiny smoke run without baselines",
        "krt bench --runs 5 --pods 1 --slots 4 --no-ceiling --no-floor --jobs 0",
      ],
    ],
  });

  scenario = Option.String("--scenario,-s", "hotpath", {
    description: `Scenarios, comma-separated: ${SCENARIOS.map((s) => s.name).join(", ")} or all (default: hotpath); or ${GATEWAY_SCENARIOS.join(" or ")} on its own`,
  });
  runtime = Option.String("--runtime,-r", {
    description: `Runtime languages, comma-separated: ${LANGUAGES.join(", ")} (default: bash; python,bash for invoke)`,
  });
  image = Option.String("--image", {
    description: "Image of the runtime container (default: ghcr.io/kruntimes/<runtime>)",
  });
  runs = Option.String("--runs", { description: "Runs per scenario (overrides the scenario)" });
  concurrency = Option.String("--concurrency,-c", {
    description:
      "Creates in flight (overrides the scenario); invoke: calls in flight, a list (default 1,16,64)",
  });
  pods = Option.String("--pods", { description: "Pods of the Runtime (overrides the scenario)" });
  slots = Option.String("--slots", { description: "Concurrent Runs per pod (overrides the scenario)" });
  ceiling = Option.Boolean("--ceiling", true, {
    description: "Measure the apiserver write ceiling (--no-ceiling skips it)",
  });
  ceilingObjects = Option.String("--ceiling-objects", "500", {
    description:
      "Objects for the ceilings: ConfigMaps (2 writes each) and Runs (3 writes each) (default: 500)",
  });
  floor = Option.Boolean("--floor", true, {
    description: "Measure the Run-shaped floor (--no-floor skips it)",
  });
  jobs = Option.String("--jobs", "20", {
    description: "Jobs for the Job-per-task baseline; 0 skips it (default: 20)",
  });
  jobConcurrency = Option.String("--job-concurrency", "5", {
    description: "Jobs created at a time (default: 5)",
  });
  readyTimeout = Option.String("--ready-timeout", "3m", {
    description: "Longest to wait for a Runtime's pods (default: 3m)",
  });
  timeout = Option.String("--timeout", "10m", {
    description: "Longest one scenario's Runs may take (default: 10m)",
  });
  record = Option.String("--record", {
    description: "Also write hotpath-<date>.md and .json into this directory",
  });
  keep = Option.Boolean("--keep", false, { description: "Keep the namespace and what is in it" });
  protocol = Option.String("--protocol", {
    description: `invoke: protocols, comma-separated: ${GATEWAY_PROTOCOLS.join(", ")} (default: all)`,
  });
  durationFlag = Option.String("--duration", "10s", {
    description: "invoke: how long each protocol × concurrency cell is measured (default: 10s)",
  });
  warmup = Option.String("--warmup", "1s", {
    description: "invoke: calls before each cell is measured, for this long (default: 1s)",
  });
  workers = Option.String("--workers", "4", {
    description: "invoke: concurrent calls each function Run serves (default: 4)",
  });
  sessions = Option.String("--sessions", "5", {
    description: "session: session Runs (and task Runs) created one after another (default: 5)",
  });
  execs = Option.String("--execs", "100", { description: "session: exec echo calls (default: 100)" });
  listEntries = Option.String("--list-entries", "10000", {
    description: "session: entries in the listed directory (default: 10000)",
  });
  pageSize = Option.String("--page-size", "1000", {
    description: "session: entries per ListFiles page (default: 1000)",
  });
  token = Option.String("--token", {
    description: "invoke, session: bearer token to call the gateway with (default: the kubeconfig's)",
  });
  gatewayNamespace = Option.String("--gateway-namespace", {
    description: "invoke, session: namespace of the gateway Service (default kruntimes)",
  });
  gatewayVia = Option.String("--gateway-via", {
    description: "invoke, session: auto (direct, else port-forward), direct, port-forward",
  });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    if (opts.allNamespaces)
      throw CliError.usage("krt bench works in one namespace; -A does not apply", "drop -A");
    if (opts.output !== "table" && opts.output !== "json")
      throw CliError.usage(`krt bench prints a table or -o json, not -o ${opts.output}`);
    if ((GATEWAY_SCENARIOS as readonly string[]).includes(this.scenario)) return this.runGateway(opts);
    const benchOpts = this.options();
    const { client } = this.connect(opts);
    const { abort, onSigint, progress } = this.interruptible();
    let namespace: string | undefined;
    let created = false;
    try {
      const result = await runBench(
        {
          client,
          nowMicros: this.context.nowMicros,
          progress,
          signal: abort.signal,
          namespace: opts.namespace,
          onNamespace: (n, made) => {
            namespace = n;
            created = made;
          },
        },
        benchOpts,
      );
      this.print(opts.output === "json" ? JSON.stringify(result, null, 2) : renderText(result));
      if (this.record) {
        mkdirSync(this.record, { recursive: true });
        const base = join(this.record, `hotpath-${result.startedAt.slice(0, 10)}`);
        writeFileSync(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
        writeFileSync(`${base}.md`, renderMarkdown(result));
        progress.line(`recorded ${base}.json and ${base}.md`);
      }
      const failed = result.scenarios.some((s) => s.breakdown.failed > 0) || (result.jobs?.failed ?? 0) > 0;
      return failed ? ExitCode.BenchFailures : undefined;
    } catch (e) {
      if (abort.signal.aborted) throw abort.signal.reason;
      throw e instanceof BenchError ? new CliError(ExitCode.WaitTimeout, e.message, e.hint) : e;
    } finally {
      process.off("SIGINT", onSigint);
      if (namespace && !this.keep) {
        progress.line(
          created ? `deleting namespace ${namespace}` : `deleting what krt bench made in ${namespace}`,
        );
        await (created ? deleteBenchNamespace(client, namespace) : deleteBenchObjects(client, namespace));
      } else if (namespace) progress.line(`kept ${namespace}`);
    }
  }

  /** Ctrl-C aborts (and cleans up; a second one quits at once); progress on stderr, TTY-aware. */
  private interruptible() {
    const abort = new AbortController();
    const onSigint = () => {
      this.context.stderr.write("\ninterrupted: cleaning up (Ctrl-C again to quit at once)\n");
      process.once("SIGINT", () => process.exit(ExitCode.Interrupted));
      abort.abort(new CliError(ExitCode.Interrupted, "interrupted"));
    };
    process.once("SIGINT", onSigint);
    const tty = Boolean((this.context.stderr as { isTTY?: boolean }).isTTY);
    return { abort, onSigint, progress: new Progress(this.context.stderr, tty) };
  }

  /** `--scenario invoke|session`: through the gateway, on the cluster's own Runtimes. */
  private async runGateway(opts: GlobalOptions): Promise<number | undefined> {
    const scenario = this.scenario as (typeof GATEWAY_SCENARIOS)[number];
    const via = (this.gatewayVia ?? "auto") as Via;
    if (!VIA.includes(via))
      throw CliError.usage(`--gateway-via "${this.gatewayVia}"`, `use ${VIA.join(", ")}`);
    const runtimes = (this.runtime ?? (scenario === "invoke" ? "python,bash" : "bash"))
      .split(",")
      .map((l) => l.trim());
    for (const l of runtimes)
      if (!LANGUAGES.includes(l as RuntimeLanguage))
        throw CliError.usage(
          `unknown runtime "${l}"`,
          `use --runtime ${LANGUAGES.join(", ")} or both, comma-separated`,
        );
    if (scenario === "session" && runtimes.length > 1)
      throw CliError.usage("--scenario session takes one --runtime");
    const protocols = (this.protocol ?? GATEWAY_PROTOCOLS.join(",")).split(",").map((p) => p.trim());
    for (const p of protocols)
      if (!GATEWAY_PROTOCOLS.includes(p as GatewayProtocol))
        throw CliError.usage(
          `unknown protocol "${p}"`,
          `use --protocol ${GATEWAY_PROTOCOLS.join(", ")}, comma-separated`,
        );
    const concurrency = (this.concurrency ?? "1,16,64")
      .split(",")
      .map((c) => this.count("--concurrency", c.trim()) ?? 1);
    const durationMs = this.duration("--duration", this.durationFlag);
    const warmupMs = parseApiDuration(this.warmup);
    if (warmupMs === undefined)
      throw CliError.usage(`--warmup "${this.warmup}" is not a duration`, "e.g. 1s, 0s");
    const readyTimeoutMs = this.duration("--ready-timeout", this.readyTimeout);
    const session = this.connect(opts);
    const { client } = session;
    const gatewayNamespace = this.gatewayNamespace ?? this.context.env.KRT_GATEWAY_NAMESPACE ?? "kruntimes";
    const namespace = opts.namespace ?? gatewayNamespace;
    const conn = session.conn as { token?: string; tokenFile?: string };
    const token =
      this.token ??
      conn.token ??
      (conn.tokenFile ? (await Bun.file(conn.tokenFile).text()).trim() : undefined);
    const { abort, onSigint, progress } = this.interruptible();
    const made: Parameters<typeof deleteGatewayBenchObjects>[2] = [];
    const env: GatewayBenchEnv = {
      client,
      progress,
      signal: abort.signal,
      namespace,
      gatewayNamespace,
      ...(token ? { token } : {}),
      onCreated: (kind, name) => made.push({ kind, name }),
      locate: () =>
        locateGateway(client, {
          url: this.context.env.KRT_GATEWAY,
          namespace: gatewayNamespace,
          via,
          insecure: false,
          kubectl: {
            bin: this.context.env.KRT_KUBECTL ?? "kubectl",
            ...(opts.kubeconfig ? { kubeconfig: opts.kubeconfig } : {}),
            ...(opts.context ? { context: opts.context } : {}),
          },
          dialTimeoutMs: 1500,
        }),
    };
    try {
      const interrupted = new Promise<never>((_, reject) =>
        abort.signal.addEventListener("abort", () => reject(abort.signal.reason), { once: true }),
      );
      const result = await Promise.race([
        scenario === "invoke"
          ? runInvokeBench(env, {
              runtimes,
              protocols: protocols as GatewayProtocol[],
              concurrency,
              durationMs,
              warmupMs,
              workers: this.count("--workers", this.workers) ?? 4,
              readyTimeoutMs,
            })
          : runSessionBench(env, {
              runtime: runtimes[0] as string,
              sessions: this.count("--sessions", this.sessions) ?? 5,
              execs: this.count("--execs", this.execs) ?? 100,
              listEntries: this.count("--list-entries", this.listEntries) ?? 10000,
              pageSize: this.count("--page-size", this.pageSize) ?? 1000,
              readyTimeoutMs,
            }),
        interrupted,
      ]);
      const render = (md: boolean) =>
        result.scenario === "invoke" ? renderInvoke(result, md) : renderSession(result, md);
      this.print(opts.output === "json" ? JSON.stringify(result, null, 2) : render(false));
      if (this.record) {
        mkdirSync(this.record, { recursive: true });
        const base = join(this.record, `krt-bench-${scenario}-${result.startedAt.slice(0, 10)}`);
        writeFileSync(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
        writeFileSync(`${base}.md`, render(true));
        progress.line(`recorded ${base}.json and ${base}.md`);
      }
      return undefined;
    } catch (e) {
      if (abort.signal.aborted) throw abort.signal.reason;
      throw e instanceof BenchError ? new CliError(ExitCode.WaitTimeout, e.message, e.hint) : e;
    } finally {
      process.off("SIGINT", onSigint);
      if (made.length > 0 && !this.keep) {
        progress.line(`deleting what krt bench made in ${namespace} (${made.length} objects)`);
        await deleteGatewayBenchObjects(client, namespace, made);
      } else if (made.length > 0) progress.line(`kept ${made.map((m) => m.name).join(", ")}`);
    }
  }

  private options(): BenchOptions {
    const names =
      this.scenario === "all" ? SCENARIOS.map((s) => s.name) : this.scenario.split(",").map((s) => s.trim());
    const scenarios: Scenario[] = names.map((n) => {
      const s = scenarioNamed(n);
      if (!s)
        throw CliError.usage(
          `unknown scenario "${n}"`,
          `use ${SCENARIOS.map((x) => x.name).join(", ")} or all`,
        );
      return {
        ...s,
        runs: this.count("--runs", this.runs) ?? s.runs,
        concurrency: this.count("--concurrency", this.concurrency) ?? s.concurrency,
        // Creates in flight given: the Runs overlap, whatever the scenario did.
        ...(this.concurrency !== undefined ? { oneAtATime: false } : {}),
        pods: this.count("--pods", this.pods) ?? s.pods,
        slotsPerPod: this.count("--slots", this.slots) ?? s.slotsPerPod,
      };
    });
    const languages = (this.runtime ?? "bash").split(",").map((l) => l.trim());
    for (const l of languages)
      if (!LANGUAGES.includes(l as RuntimeLanguage))
        throw CliError.usage(
          `unknown runtime "${l}"`,
          `use --runtime ${LANGUAGES.join(", ")} or both, comma-separated`,
        );
    if (this.image !== undefined && languages.length > 1)
      throw CliError.usage("--image names one image; give one --runtime with it");
    return {
      scenarios,
      runtimes: languages.map((l) => ({
        language: l as RuntimeLanguage,
        image: this.image ?? `ghcr.io/kruntimes/${l}`,
      })),
      ceiling: this.ceiling,
      ceilingObjects: this.count("--ceiling-objects", this.ceilingObjects) ?? 500,
      floor: this.floor,
      jobs: this.count("--jobs", this.jobs, true) ?? 20,
      jobConcurrency: this.count("--job-concurrency", this.jobConcurrency) ?? 5,
      readyTimeoutMs: this.duration("--ready-timeout", this.readyTimeout),
      runTimeoutMs: this.duration("--timeout", this.timeout),
    };
  }

  private count(flag: string, v: string | undefined, zeroOk = false): number | undefined {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || (!zeroOk && n === 0) || n > 100_000)
      throw CliError.usage(`${flag} "${v}" must be a whole number from ${zeroOk ? 0 : 1} to 100000`);
    return n;
  }

  private duration(flag: string, v: string): number {
    const ms = parseApiDuration(v);
    if (ms === undefined || ms <= 0) throw CliError.usage(`${flag} "${v}" is not a duration`, "e.g. 90s, 5m");
    return ms;
  }
}
