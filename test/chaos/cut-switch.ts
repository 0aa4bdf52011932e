/**
 * The cut switch: a loopback TCP forwarder between each Runtime pod's runtimed and the
 * kube-apiserver, one listening port per pod, so the chaos suite can cut ONE runtimed off the API
 * for a while. The machine has neither iptables nor nftables, and moving a running process into a
 * network namespace is not possible from outside; the forwarder is the loopback-only stand-in for a
 * dropped link. A cut destroys the pod's open connections and, until it ends, accepts new ones but
 * never forwards a byte (packets vanish, as on a partitioned link: clients hit their own timeouts).
 * TLS is end to end (the apiserver's certificate names 127.0.0.1), the forwarder sees bytes only.
 *
 * runtimed learns its port through test/chaos/runtimed-via-cut-switch.sh, the runtimed command
 * the chaos controller renders: GET /port?pod=<name> on the control port.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

interface Link {
  server: Server;
  port: number;
  conns: Set<Socket>;
  cutUntil: number;
}

export class CutSwitch {
  private readonly links = new Map<string, Link>();
  private readonly listening = new Map<string, Promise<Link>>();
  private readonly control: ReturnType<typeof Bun.serve>;

  private constructor(private readonly apiserverPort: number) {
    this.control = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (req) => {
        const url = new URL(req.url);
        const pod = url.searchParams.get("pod");
        if (url.pathname !== "/port" || !pod) return new Response("GET /port?pod=<name>\n", { status: 400 });
        return new Response(String((await this.link(pod)).port));
      },
    });
  }

  static start(apiserverPort: number): CutSwitch {
    return new CutSwitch(apiserverPort);
  }

  /** Where runtimed-via-cut-switch.sh asks for its port. */
  get controlUrl(): string {
    return `http://127.0.0.1:${this.control.port}`;
  }

  /** Pods whose runtimed has asked for a port. */
  get pods(): string[] {
    return [...this.links.keys()];
  }

  /** The forwarding ports handed out (runtimed's KUBERNETES_SERVICE_PORT). */
  get ports(): number[] {
    return [...this.links.values()].map((l) => l.port);
  }

  /** Cuts `pod`'s runtimed off the apiserver for `ms`: open connections dropped, new ones black-holed. */
  cut(pod: string, ms: number): void {
    const link = this.links.get(pod);
    if (!link) throw new Error(`runtimed of ${pod} never connected through the cut switch`);
    link.cutUntil = Date.now() + ms;
    for (const c of link.conns) c.destroy();
    link.conns.clear();
  }

  stop(): void {
    this.control.stop(true);
    for (const l of this.links.values()) {
      l.server.close();
      for (const c of l.conns) c.destroy();
    }
  }

  private link(pod: string): Promise<Link> {
    const existing = this.listening.get(pod);
    if (existing) return existing;
    const link: Link = { server: createServer(), port: 0, conns: new Set(), cutUntil: 0 };
    link.server.on("connection", (client) => {
      link.conns.add(client);
      client.on("close", () => link.conns.delete(client));
      client.on("error", () => client.destroy());
      // A cut link accepts and then stays silent: nothing is forwarded, nothing answered.
      if (link.cutUntil > Date.now()) {
        client.resume();
        return;
      }
      const up = connect({ host: "127.0.0.1", port: this.apiserverPort });
      link.conns.add(up);
      up.on("close", () => {
        link.conns.delete(up);
        client.destroy();
      });
      up.on("error", () => up.destroy());
      client.on("close", () => up.destroy());
      client.pipe(up);
      up.pipe(client);
    });
    this.links.set(pod, link);
    const listening = new Promise<Link>((resolve) =>
      link.server.listen(0, "127.0.0.1", () => {
        link.port = (link.server.address() as { port: number }).port;
        resolve(link);
      }),
    );
    this.listening.set(pod, listening);
    return listening;
  }
}
