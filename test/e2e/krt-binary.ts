/**
 * The compiled krt binary for the e2e suites: built once per test process by krt/build.sh, run
 * with a clean environment pointing at the test cluster. Streaming runs expose stdout as it comes.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeClient } from "@kruntimes/kube";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import { testNamespace } from "../support/cluster.ts";
import { type ProcessResult, runProcess } from "../support/process.ts";

const ROOT = join(import.meta.dir, "..", "..");
let built: Promise<string> | undefined;

/**
 * Builds dist krt into a temp dir (once per process) and returns its path; KRT_E2E_KRT names one
 * built already (scripts/run-suites.ts builds it once for all its test processes).
 */
export function buildKrt(): Promise<string> {
  built ??= (async () => {
    const prebuilt = process.env.KRT_E2E_KRT;
    if (prebuilt && existsSync(prebuilt)) return prebuilt;
    const bin = join(mkdtempSync(join(tmpdir(), "krt-e2e-")), "krt");
    const p = Bun.spawn(["bash", join(ROOT, "krt", "build.sh"), bin], { stdout: "pipe", stderr: "pipe" });
    if ((await p.exited) !== 0)
      throw new Error(`krt/build.sh failed: ${await new Response(p.stderr).text()}`);
    return bin;
  })();
  return built;
}

export type KrtResult = ProcessResult;

export interface KrtOptions {
  kubeconfig: string;
  env?: Record<string, string>;
  stdin?: string;
}

/** A clean environment: PATH, a throwaway HOME and the test cluster's kubeconfig. */
const krtEnv = (opts: KrtOptions) => ({
  PATH: process.env.PATH ?? "",
  HOME: tmpdir(),
  KUBECONFIG: opts.kubeconfig,
  ...opts.env,
});

export function runKrt(bin: string, args: string[], opts: KrtOptions): Promise<KrtResult> {
  return runProcess([bin, ...args], { env: krtEnv(opts), stdin: opts.stdin });
}

/** A running krt whose output so far can be read while it runs. */
export interface LiveKrt {
  stdout(): string;
  stderr(): string;
  /** Resolves when `text` has appeared on stdout. */
  waitForStdout(text: string, timeoutMs?: number): Promise<void>;
  result: Promise<KrtResult>;
  kill(): void;
  /** SIGINT, as Ctrl-C sends. */
  interrupt(): void;
}

export function startKrt(bin: string, args: string[], opts: KrtOptions): LiveKrt {
  const proc = Bun.spawn([bin, ...args], {
    env: krtEnv(opts),
    stdin: opts.stdin !== undefined ? new Blob([opts.stdin]) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  let err = "";
  const pump = async (s: ReadableStream<Uint8Array>, add: (t: string) => void) => {
    const d = new TextDecoder();
    for await (const chunk of s) add(d.decode(chunk, { stream: true }));
  };
  const outDone = pump(proc.stdout, (t) => {
    out += t;
  });
  const errDone = pump(proc.stderr, (t) => {
    err += t;
  });
  const result = Promise.all([outDone, errDone, proc.exited]).then(([, , code]) => ({
    code,
    stdout: out,
    stderr: err,
  }));
  return {
    stdout: () => out,
    stderr: () => err,
    async waitForStdout(text, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!out.includes(text)) {
        if (Date.now() > deadline || proc.exitCode !== null)
          throw new Error(`krt ${args.join(" ")}: "${text}" not on stdout; stdout: ${out}; stderr: ${err}`);
        await Bun.sleep(20);
      }
    },
    result,
    kill: () => proc.kill(),
    interrupt: () => proc.kill("SIGINT"),
  };
}

/** True when runtimed and the Runtime Server are in the tree, so Runs really execute. */
export const runsExecute =
  existsSync(join(ROOT, "runtimed/main.ts")) && existsSync(join(ROOT, "runtimes/server/main.ts"));

/** What a suite whose Runs really execute stands on; `close` stops the controller, drops the namespace. */
export interface RealRunsEnv {
  bin: string;
  ns: Awaited<ReturnType<typeof testNamespace>>;
  controller: ControllerProcess;
  close(): Promise<void>;
}

/** krt built, the CRDs installed, a fresh namespace, and a controller for it running real runtimed. */
export async function realRunsEnv(
  client: KubeClient,
  kubeconfig: string,
  nsPrefix: string,
): Promise<RealRunsEnv> {
  const bin = await buildKrt();
  await installCrds(client);
  const ns = await testNamespace(client, nsPrefix);
  const controller = startController({ namespace: ns.name, kubeconfig, runtimed: "real" });
  return {
    bin,
    ns,
    controller,
    async close() {
      controller.kill();
      await controller.exited;
      await ns.remove();
    },
  };
}
