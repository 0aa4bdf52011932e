/** What the numbers were measured on: the client machine and the cluster's version. */
import { cpus, loadavg, platform, release, totalmem } from "node:os";
import type { KubeClient } from "@kruntimes/kube";

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  bun: string;
  /** 1-, 5- and 15-minute load averages when the result was written: other work on the machine. */
  loadAverage: number[];
}

export interface ClusterInfo {
  server: string;
  version?: string;
}

export function machineInfo(): MachineInfo {
  const c = cpus();
  return {
    cpus: c.length,
    cpuModel: c[0]?.model.trim() ?? "unknown",
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${platform()} ${release()}`,
    bun: Bun.version,
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

export async function clusterInfo(client: KubeClient): Promise<ClusterInfo> {
  const v = await client
    .request<{ gitVersion?: string }>("GET", "/version", { signal: AbortSignal.timeout(5000) })
    .catch(() => undefined);
  return { server: client.conn.server, version: v?.gitVersion };
}
