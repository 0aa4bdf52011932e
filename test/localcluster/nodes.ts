/**
 * The local cluster's nodes: 1–3 node agents, each with its own Node name, pod address range,
 * state directory, kubelet port and supervisor component name. Node 1 keeps the names a
 * one-node cluster always had (`krt-local-node`, `node/`, `node-agent`), so tests and tools that
 * know only those keep working; nodes 2 and 3 add a `-2`/`-3` suffix.
 */
import { intToIp, ipToInt } from "./node-agent/network/ip-allocator.ts";

export const MAX_NODES = 3;

export interface LocalNode {
  /** 1-based. */
  index: number;
  /** The Node object's name (and the client certificate's system:node:<name>). */
  name: string;
  /** The supervisor's component name: start/stop/restart it through the control socket. */
  component: string;
  /** The agent's state directory (pods, logs, volumes, the process registry). */
  stateDir: string;
  podIpRange: string;
}

export class NodeCountError extends Error {
  override name = "NodeCountError";
}

/** `KRT_NODES` / `--nodes`: unset means 1; anything but 1..3 is refused with what is allowed. */
export function parseNodeCount(raw: string | undefined): number {
  if (raw === undefined || raw === "") return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_NODES) {
    throw new NodeCountError(`node count "${raw}": use 1, 2 or 3 (KRT_NODES or --nodes)`);
  }
  return n;
}

/** Reads `--nodes N` or `--nodes=N` from argv; undefined when absent. */
export function nodesFlag(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--nodes") return argv[i + 1] ?? "";
    if (a.startsWith("--nodes=")) return a.slice("--nodes=".length);
  }
  return undefined;
}

/**
 * The pod range of node `index` of `count`: one node takes the whole range (as before); with more,
 * the range is cut into four equal parts and node i takes part i, so the cluster as a whole still
 * stays inside the range it was given (a second cluster's disjoint range stays disjoint).
 */
export function nodePodRange(cidr: string, index: number, count: number): string {
  if (count === 1) return cidr;
  const m = /^([0-9.]+)\/([0-9]{1,2})$/.exec(cidr.trim());
  if (!m) throw new NodeCountError(`pod range "${cidr}" is not a CIDR`);
  const bits = Number(m[2]) + 2;
  if (bits > 30) throw new NodeCountError(`pod range "${cidr}" is too small to split between nodes`);
  const mask = (~0 << (32 - Number(m[2]))) >>> 0;
  const network = (ipToInt(m[1] as string) & mask) >>> 0;
  const part = 2 ** (32 - bits);
  return `${intToIp(network + (index - 1) * part)}/${bits}`;
}

export function planNodes(o: {
  baseName: string;
  count: number;
  podIpRange: string;
  clusterDir: string;
}): LocalNode[] {
  const out: LocalNode[] = [];
  for (let i = 1; i <= o.count; i++) {
    const suffix = i === 1 ? "" : `-${i}`;
    out.push({
      index: i,
      name: `${o.baseName}${suffix}`,
      component: `node-agent${suffix}`,
      stateDir: `${o.clusterDir}/node${suffix}`,
      podIpRange: nodePodRange(o.podIpRange, i, o.count),
    });
  }
  return out;
}
