/**
 * Pod IPs from a loopback range (Linux routes all of 127.0.0.0/8 to `lo`, so every address works
 * without setup). Allocation walks the range round-robin, so a freed address is not handed to the
 * next pod at once: a test that probes a deleted pod's IP must not reach its replacement.
 */

export class IpRangeError extends Error {
  override name = "IpRangeError";
}

export function ipToInt(ip: string): number {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new IpRangeError(`invalid IPv4 address "${ip}"`);
  }
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

export function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

export interface IpRange {
  /** First and last usable address (network and broadcast addresses excluded). */
  first: number;
  last: number;
}

export function parseCidr(cidr: string): IpRange {
  const m = /^([0-9.]+)\/([0-9]{1,2})$/.exec(cidr.trim());
  if (!m) throw new IpRangeError(`invalid CIDR "${cidr}"`);
  const bits = Number(m[2]);
  if (bits < 8 || bits > 30) throw new IpRangeError(`CIDR "${cidr}": prefix must be /8../30`);
  const base = ipToInt(m[1]!);
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  const network = (base & mask) >>> 0;
  if (network >>> 24 !== 127) throw new IpRangeError(`CIDR "${cidr}" is not inside 127.0.0.0/8 (loopback)`);
  const broadcast = (network | (~mask >>> 0)) >>> 0;
  return { first: network + 1, last: broadcast - 1 };
}

const HOST_LOOPBACK = ipToInt("127.0.0.1");

export class IpAllocator {
  private readonly range: IpRange;
  private readonly owners = new Map<number, string>();
  private next: number;

  constructor(cidr: string) {
    this.range = parseCidr(cidr);
    this.next = this.range.first;
  }

  contains(ip: string): boolean {
    try {
      const n = ipToInt(ip);
      return n >= this.range.first && n <= this.range.last;
    } catch {
      return false;
    }
  }

  /** Claims a specific address (a pod that already reported one); false if taken or out of range. */
  reserve(ip: string, owner: string): boolean {
    if (!this.contains(ip)) return false;
    const n = ipToInt(ip);
    const cur = this.owners.get(n);
    if (cur !== undefined && cur !== owner) return false;
    this.owners.set(n, owner);
    return true;
  }

  /**
   * The owner's address, allocating the next free one round-robin; addresses for which `taken`
   * says true (something on the host already listens there) are skipped.
   */
  allocate(owner: string, taken: (ip: string) => boolean = () => false): string {
    for (const [n, o] of this.owners) if (o === owner) return intToIp(n);
    const size = this.range.last - this.range.first + 1;
    for (let i = 0; i < size; i++) {
      const n = this.next;
      this.next = n >= this.range.last ? this.range.first : n + 1;
      // The host's own address is never a pod's.
      if (!this.owners.has(n) && n !== HOST_LOOPBACK && !taken(intToIp(n))) {
        this.owners.set(n, owner);
        return intToIp(n);
      }
    }
    throw new IpRangeError(`pod IP range exhausted (${size} addresses in use)`);
  }

  release(owner: string): void {
    for (const [n, o] of this.owners) if (o === owner) this.owners.delete(n);
  }

  get inUse(): number {
    return this.owners.size;
  }
}
