/**
 * IPv4 addresses that have a listening TCP or bound UDP socket on this host, from /proc/net.
 * The pod IP allocator skips them: another agent (a second local cluster on the same machine with
 * an overlapping range) or a stray process may already serve on an address, and a pod handed that
 * address would fail to bind its port.
 */
import { existsSync, readFileSync } from "node:fs";

const TCP_LISTEN = "0A";
const UDP_BOUND = "07";

/** `0100007F:1F90` (little-endian hex IPv4, port) → `127.0.0.1`. */
export function hexToIpv4(hex: string): string {
  const n = Number.parseInt(hex, 16);
  return [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24].join(".");
}

export function parseProcNet(text: string, state: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 4 || f[3] !== state) continue;
    out.push(hexToIpv4(f[1]!.split(":")[0]!));
  }
  return out;
}

export function boundAddresses(): Set<string> {
  const out = new Set<string>();
  for (const [file, state] of [
    ["/proc/net/tcp", TCP_LISTEN],
    ["/proc/net/udp", UDP_BOUND],
  ] as const) {
    if (existsSync(file)) for (const ip of parseProcNet(readFileSync(file, "utf8"), state)) out.add(ip);
  }
  return out;
}
