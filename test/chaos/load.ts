/**
 * The chaos suite's steady mixed load: task Runs of both languages created at a fixed rate (each
 * appends `<run UID> <attempt>` to a host ledger before doing anything else), function
 * invocations through the gateway and session file operations through the gateway, each loop
 * recording what happened and when. What a Run is expected to end as is decided when it is
 * created, from its script and retry policy alone.
 */
import type { Run, RunSpec } from "@kruntimes/api";
import { RunResource } from "@kruntimes/api";
import { isConflict, type KubeClient, path } from "@kruntimes/kube";

export interface Expectation {
  phase: string;
  reason: string;
}

export interface CreatedRun {
  name: string;
  kind: "bash" | "python" | "bash-fail" | "probe";
  createdAt: number;
  expect: Expectation;
}

export interface Call {
  at: number;
  ok: boolean;
  error?: string;
}

/** Survives the faults the suite injects: a lost pod, a dead Runtime Server, a stale heartbeat. */
const RETRY: RunSpec["retryPolicy"] = { maxAttempts: 6, backoff: { initial: "200ms", max: "2s" } };

export interface LoadTargets {
  client: KubeClient;
  namespace: string;
  ledger: string;
  /** Base URL of the gateway's plain HTTP listener. */
  gateway: string;
  token: string;
  functionRun: string;
  sessionRun: string;
  /** The Runtimes task Runs go to: bash (with an artifact store) and python. */
  bash: string;
  python: string;
}

export class MixedLoad {
  readonly runs: CreatedRun[] = [];
  readonly invocations: Call[] = [];
  readonly sessionOps: Call[] = [];
  readonly createErrors: Call[] = [];
  private stopped = false;
  private paused = false;
  private loops: Promise<void>[] = [];
  private seq = 0;
  private ops = 0;

  constructor(private readonly t: LoadTargets) {}

  start(o: { runEveryMs: number; invokeEveryMs: number; sessionEveryMs: number }): void {
    this.loops = [
      this.every(o.runEveryMs, () => this.createNext()),
      this.every(o.invokeEveryMs, () => this.invoke()),
      this.every(o.sessionEveryMs, () => this.sessionOp()),
    ];
  }

  /** Stops creating task Runs (invocations and session operations go on). */
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /** A bash Run that only records its attempt: how fast the control plane places and ends a Run. */
  async probe(): Promise<CreatedRun> {
    return this.create("probe");
  }

  private async every(ms: number, f: () => Promise<unknown>): Promise<void> {
    while (!this.stopped) {
      const t0 = Date.now();
      // Not awaited: a call hanging on a fault must not slow the rate of the others.
      void f().catch(() => {});
      await Bun.sleep(Math.max(0, ms - (Date.now() - t0)));
    }
  }

  private async createNext(): Promise<void> {
    if (this.paused) return;
    const kinds = ["bash", "python", "bash", "bash-fail"] as const;
    await this.create(kinds[this.seq % kinds.length] as CreatedRun["kind"]);
  }

  private async create(kind: CreatedRun["kind"]): Promise<CreatedRun> {
    const n = this.seq++;
    const name = `${kind}-${n}`;
    const sleep = (n % 7) / 5; // 0–1.2 s, so some attempts are always running when a fault lands
    const record = `echo "$KRUNTIME_RUN_UID $KRUNTIME_ATTEMPT" >> ${this.t.ledger}`;
    let spec: Partial<RunSpec>;
    let expect: Expectation = { phase: "Succeeded", reason: "Completed" };
    if (kind === "python") {
      spec = {
        runtime: this.t.python,
        source: {
          inline: [
            "import os, time",
            `with open(${JSON.stringify(this.t.ledger)}, "a") as f:`,
            "    f.write(f\"{os.environ['KRUNTIME_RUN_UID']} {os.environ['KRUNTIME_ATTEMPT']}\\n\")",
            `time.sleep(${sleep})`,
          ].join("\n"),
        },
      };
    } else if (kind === "bash-fail") {
      spec = { runtime: this.t.bash, source: { inline: `${record}\nsleep ${sleep}\nexit 3` } };
      // NonZeroExit is not in the default retryOn: the first exit 3 is final.
      expect = { phase: "Failed", reason: "NonZeroExit" };
    } else if (kind === "probe") {
      spec = { runtime: this.t.bash, source: { inline: record } };
    } else {
      spec = {
        runtime: this.t.bash,
        source: { inline: `${record}\nsleep ${sleep}\necho "${name}" > "$KRUNTIME_ARTIFACTS_DIR/out.txt"` },
      };
    }
    const created: CreatedRun = { name, kind, createdAt: Date.now(), expect };
    const body = {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name },
      spec: { mode: { task: {} }, retryPolicy: RETRY, ...spec },
    };
    // The create itself may meet the apiserver restarting: retry it (same name, so never twice).
    for (let i = 0; ; i++) {
      try {
        await this.t.client.create<Run>(path(RunResource, this.t.namespace), body);
        break;
      } catch (e) {
        // A create the restarting apiserver did store but never answered: it exists once.
        if (isConflict(e)) break;
        this.createErrors.push({ at: Date.now(), ok: false, error: String(e).slice(0, 200) });
        if (i >= 120) throw e;
        await Bun.sleep(500);
      }
    }
    this.runs.push(created);
    return created;
  }

  private async invoke(): Promise<void> {
    const body = `ping-${this.seq}-${Date.now()}`;
    const at = Date.now();
    try {
      const res = await fetch(
        `${this.t.gateway}/v1/namespaces/${this.t.namespace}/runs/${this.t.functionRun}/invoke`,
        {
          method: "POST",
          body,
          headers: { "content-type": "text/plain", authorization: `Bearer ${this.t.token}` },
          signal: AbortSignal.timeout(10_000),
        },
      );
      const text = await res.text();
      const ok = res.status === 200 && text === body;
      this.invocations.push({ at, ok, ...(ok ? {} : { error: `${res.status} ${text.slice(0, 120)}` }) });
    } catch (e) {
      this.invocations.push({ at, ok: false, error: String(e).slice(0, 120) });
    }
  }

  private async sessionOp(): Promise<void> {
    const at = Date.now();
    const file = `f-${this.ops++ % 50}.txt`;
    const data = `op ${at}\n`;
    const url = `${this.t.gateway}/v1/namespaces/${this.t.namespace}/runs/${this.t.sessionRun}/files/${file}`;
    const headers = { authorization: `Bearer ${this.t.token}` };
    try {
      const put = await fetch(url, {
        method: "PUT",
        body: data,
        headers,
        signal: AbortSignal.timeout(10_000),
      });
      await put.arrayBuffer();
      const get = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
      const back = await get.text();
      const ok = put.status < 300 && get.status === 200 && back === data;
      this.sessionOps.push({
        at,
        ok,
        ...(ok ? {} : { error: `PUT ${put.status} GET ${get.status} ${back.slice(0, 120)}` }),
      });
    } catch (e) {
      this.sessionOps.push({ at, ok: false, error: String(e).slice(0, 120) });
    }
  }
}
