/**
 * What must hold after every fault: each Run ends as its script and retry policy predict, no
 * attempt ran twice (host ledger), none is stuck, capacity accounting is back to what the live
 * function and session hold, and nothing is left running for a Run or a pod that is gone.
 */
import { readdirSync, readFileSync } from "node:fs";
import { isTerminalPhase, type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, path } from "@kruntimes/kube";
import type { CreatedRun } from "./load.ts";

export interface RunVerdicts {
  /** Created, then missing from the API, or Succeeded with no ledger line for its final attempt. */
  lost: string[];
  /** `<uid> <attempt>` lines written more than once. */
  doubled: string[];
  /** Not terminal when the bound passed. */
  stuck: string[];
  /** Terminal, but not in the phase/reason its policy predicts. */
  wrong: string[];
  terminal: Map<string, Run>;
}

/** Waits until every Run in `runs` is terminal or `deadline` passes; then judges them all. */
export async function settleAndJudge(
  client: KubeClient,
  namespace: string,
  runs: readonly CreatedRun[],
  ledgerFile: string,
  deadline: number,
): Promise<RunVerdicts> {
  const terminal = new Map<string, Run>();
  const missing = new Set<string>();
  for (;;) {
    const list = await client.list<Run>(path(RunResource, namespace)).catch(() => undefined);
    if (list) {
      const byName = new Map(list.items.map((r) => [r.metadata.name as string, r]));
      missing.clear();
      for (const c of runs) {
        const r = byName.get(c.name);
        if (!r) missing.add(c.name);
        else if (isTerminalPhase(r.status?.phase)) terminal.set(c.name, r);
      }
      if (terminal.size + missing.size === runs.length) break;
    }
    if (Date.now() > deadline) break;
    await Bun.sleep(250);
  }
  const ledger = readLedger(ledgerFile);
  const v: RunVerdicts = { lost: [...missing], doubled: [], stuck: [], wrong: [], terminal };
  for (const [line, n] of ledger) if (n > 1) v.doubled.push(`${line} ×${n}`);
  for (const c of runs) {
    if (missing.has(c.name)) continue;
    const r = terminal.get(c.name);
    if (!r) {
      v.stuck.push(c.name);
      continue;
    }
    const s = r.status;
    if (s?.phase !== c.expect.phase || s?.reason !== c.expect.reason)
      v.wrong.push(
        `${c.name}: ${s?.phase}/${s?.reason} (expected ${c.expect.phase}/${c.expect.reason}): ${s?.message ?? ""}`,
      );
    // A reported result nothing executed: the final attempt must have run (its first line is the ledger).
    if (s?.phase === "Succeeded" && !ledger.has(`${r.metadata.uid} ${s.attempt}`))
      v.lost.push(`${c.name}: Succeeded on attempt ${s.attempt} but the ledger has no such attempt`);
  }
  return v;
}

/** `<uid> <attempt>` → how many times it was written. */
export function readLedger(file: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    m.set(line.trim(), (m.get(line.trim()) ?? 0) + 1);
  }
  return m;
}

/** A value of an unlabelled or labelled sample in Prometheus text, e.g. `name{resource="runs"}`. */
export function metricValue(text: string, sample: string): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith(`${sample} `)) return Number(line.slice(sample.length + 1));
  }
  return undefined;
}

/**
 * Live processes that belong to what is gone: a process whose environment names one of `runUIDs`
 * (a task, a function worker, a session command) once every Run has ended, or one whose
 * HOSTNAME is a pod of `podPrefixes` that no longer exists. Read from /proc (pods are host
 * processes on the local cluster).
 */
export function orphanProcesses(
  runUIDs: ReadonlySet<string>,
  livePods: ReadonlySet<string>,
  podPrefixes: readonly string[],
  /** KUBERNETES_SERVICE_PORTs of this cluster's pods: other local clusters' pods are not ours. */
  apiPorts: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    let env: string;
    let cmd: string;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z") continue;
      env = readFileSync(`/proc/${name}/environ`, "utf8");
      cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    } catch {
      continue;
    }
    const vars = new Map(
      env
        .split("\0")
        .filter((kv) => kv.includes("="))
        .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)] as const),
    );
    const uid = vars.get("KRUNTIME_RUN_UID");
    if (uid && runUIDs.has(uid)) {
      out.push(`pid ${name} of Run ${uid}: ${cmd.slice(0, 120)}`);
      continue;
    }
    const host = vars.get("HOSTNAME") ?? "";
    if (
      apiPorts.has(vars.get("KUBERNETES_SERVICE_PORT") ?? "") &&
      podPrefixes.some((p) => host.startsWith(p)) &&
      !livePods.has(host)
    )
      out.push(`pid ${name} of gone pod ${host}: ${cmd.slice(0, 120)}`);
  }
  return out;
}
