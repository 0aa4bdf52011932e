/** Free loopback TCP ports, found by binding port 0 and releasing it. */
import { createServer, type Server } from "node:net";

function listen(host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, host, () => resolve(s));
  });
}

const portOf = (s: Server) => {
  const addr = s.address();
  return typeof addr === "object" && addr ? addr.port : 0;
};

/**
 * `count` distinct free ports, none of them in `avoid`. All are held at once before any is
 * released: the kernel may hand a port it just had back to the next bind(0), and a cluster once
 * got the same port for etcd's peer listener and the apiserver that way (the apiserver then
 * failed with "address already in use").
 */
export async function freePorts(
  count: number,
  avoid: readonly number[] = [],
  host = "127.0.0.1",
): Promise<number[]> {
  const held: Server[] = [];
  try {
    const ports: number[] = [];
    // A port in `avoid` stays held (so bind(0) cannot return it again) and is skipped.
    while (ports.length < count) {
      const s = await listen(host);
      held.push(s);
      const p = portOf(s);
      if (!avoid.includes(p)) ports.push(p);
      if (held.length > count + 64) throw new Error(`no ${count} free ports outside ${avoid.join(", ")}`);
    }
    return ports;
  } finally {
    await Promise.all(held.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
}
