/**
 * A local cluster of one's own (the chaos suite SIGKILLs and restarts etcd and the apiserver; the
 * soak benchmark measures processes nothing else shares): started in a given or fresh temporary
 * directory with its own pod address range, so it runs beside another local cluster on the same
 * host; `down()` stops it and leaves no process behind.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { KubeClient, loadKubeconfigFile } from "@kruntimes/kube";
import type { ClusterInfo } from "../localcluster/supervisor.ts";
import { runProcess } from "./process.ts";

const REPO = resolve(import.meta.dir, "../..");
export type Component =
  | "etcd"
  | "kube-apiserver"
  | "kube-controller-manager"
  | "kube-scheduler"
  | "node-agent";

/** One container process group as a node agent records it (`<node state>/processes/`). */
export interface ContainerProcess {
  pgid: number;
  pod: string;
  container: string;
}

export class OwnCluster {
  readonly client: KubeClient;

  private constructor(
    readonly dir: string,
    readonly info: ClusterInfo,
    private readonly env: Record<string, string | undefined>,
    private readonly temporary: boolean,
  ) {
    this.client = new KubeClient(loadKubeconfigFile(info.kubeconfig));
  }

  /** `dir` unset: a fresh temporary directory, removed by `down()`. */
  static async up(o: { dir?: string; podIpRange: string; prefix: string }): Promise<OwnCluster> {
    const given = o.dir;
    const dir = given ?? mkdtempSync(join(tmpdir(), o.prefix));
    const env = { ...process.env, KRT_CLUSTER_DIR: dir, KRT_POD_IP_RANGE: o.podIpRange };
    const r = await runProcess(["bun", "test/localcluster/main.ts", "up"], { cwd: REPO, env });
    if (r.code !== 0) throw new Error(`the chaos cluster did not start:\n${r.stdout}${r.stderr}`);
    const info = JSON.parse(readFileSync(join(dir, "cluster.json"), "utf8")) as ClusterInfo;
    return new OwnCluster(dir, info, env, given === undefined);
  }

  get kubeconfig(): string {
    return this.info.kubeconfig;
  }
  get apiserverPort(): number {
    return Number(new URL(this.info.server).port);
  }

  async down(): Promise<void> {
    await runProcess(["bun", "test/localcluster/main.ts", "down"], { cwd: REPO, env: this.env });
    if (this.temporary) rmSync(this.dir, { recursive: true, force: true });
  }

  /** The PIDs the supervisor knows for each component. */
  async status(): Promise<Record<Component, { running: boolean; pid?: number }>> {
    const res = await fetch("http://localhost/status", { unix: this.info.controlSocket } as RequestInit);
    return (await res.json()) as Record<Component, { running: boolean; pid?: number }>;
  }

  /** Asks the supervisor to stop/start/restart a component (start of the apiserver waits for /readyz). */
  async control(component: Component, action: "stop" | "start" | "restart"): Promise<void> {
    const res = await fetch(`http://localhost/components/${component}/${action}`, {
      method: "POST",
      unix: this.info.controlSocket,
    } as RequestInit);
    if (!res.ok) throw new Error(`${action} ${component}: ${await res.text()}`);
  }

  /** A crash and a restart: SIGKILL to the component's process group, then the supervisor starts it. */
  async crashRestart(component: Component): Promise<void> {
    const pid = (await this.status())[component]?.pid;
    if (!pid) throw new Error(`${component} has no pid`);
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      process.kill(pid, "SIGKILL");
    }
    while ((await this.status())[component]?.running) await Bun.sleep(20);
    // The supervisor waits 30 s for the apiserver's /readyz; on two busy cores a restart can take
    // longer (its post-start hooks), so a late one is waited for here.
    await this.control(component, "start").catch(() => {});
    await this.waitReady(120_000);
  }

  /** Resolves when the apiserver answers /readyz with 200. */
  async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      try {
        await this.client.request("GET", "/readyz", { timeoutMs: 5000, raw: true });
        return;
      } catch (e) {
        last = String(e).slice(0, 300);
      }
      await Bun.sleep(200);
    }
    throw new Error(
      `kube-apiserver not ready ${timeoutMs} ms after a restart: ${last}; see ${this.dir}/logs`,
    );
  }

  /** Every container process group the node agents have recorded. */
  containerProcesses(): ContainerProcess[] {
    const out: ContainerProcess[] = [];
    for (const node of this.info.nodes?.map((n) => n.stateDir) ?? [join(this.dir, "node")]) {
      const dir = join(node, "processes");
      if (!existsSync(dir)) continue;
      for (const f of readdirSync(dir)) {
        try {
          out.push(JSON.parse(readFileSync(join(dir, f), "utf8")) as ContainerProcess);
        } catch {
          // written or removed under us
        }
      }
    }
    return out;
  }

  /** SIGKILLs one container's process group (the node agent restarts it per restartPolicy). */
  killContainer(namespace: string, pod: string, container: string): void {
    const rec = this.containerProcesses().find(
      (x) => x.pod === `${namespace}/${pod}` && x.container === container,
    );
    if (!rec) throw new Error(`no ${container} process recorded for ${namespace}/${pod}`);
    process.kill(-rec.pgid, "SIGKILL");
  }
}

/** Whether a process group has a live member (zombies awaiting a wait do not count). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pgid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    // the leader is gone but members may live on
    return true;
  }
}
