/**
 * A port-forward to one gateway pod, opened with `kubectl port-forward` (the kubeconfig and
 * context krt uses) on a free local port. krt reads the port from kubectl's
 * `Forwarding from 127.0.0.1:<port> -> <port>` line and stops kubectl when it is done.
 */
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";

export interface PortForwardOptions {
  bin: string;
  kubeconfig?: string;
  context?: string;
  namespace: string;
  pod: string;
  port: number;
  /** How long kubectl may take to report the forward. */
  timeoutMs?: number;
}

export interface PortForward {
  localPort: number;
  close(): void;
}

const FORWARDING = /Forwarding from 127\.0\.0\.1:(\d+) -> \d+/;

export async function openPortForward(o: PortForwardOptions): Promise<PortForward> {
  const args = [
    o.bin,
    "port-forward",
    "-n",
    o.namespace,
    `pod/${o.pod}`,
    `:${o.port}`,
    "--address",
    "127.0.0.1",
  ];
  if (o.kubeconfig) args.push("--kubeconfig", o.kubeconfig);
  if (o.context) args.push("--context", o.context);
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  } catch (e) {
    throw new CliError(
      ExitCode.Unavailable,
      `cannot reach the gateway pods directly, and cannot run "${o.bin}" for a port-forward: ${e instanceof Error ? e.message : e}`,
      "install kubectl (or set $KRT_KUBECTL), or pass --gateway <URL> of an Ingress, LoadBalancer or your own port-forward",
    );
  }
  const stderr = new Response(proc.stderr as ReadableStream).text();
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let seen = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), o.timeoutMs ?? 15_000);
  });
  try {
    for (;;) {
      const chunk = await Promise.race([reader.read(), timeout]);
      if (!chunk || chunk.done) break;
      seen += decoder.decode(chunk.value, { stream: true });
      const m = FORWARDING.exec(seen);
      if (m) {
        // Keep draining kubectl's output so it never blocks on a full pipe.
        void (async () => {
          for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return;
        })();
        return { localPort: Number(m[1]), close: () => proc.kill() };
      }
    }
  } finally {
    clearTimeout(timer);
  }
  proc.kill();
  const why = (await Promise.race([stderr, Bun.sleep(1000).then(() => "")])).trim();
  throw new CliError(
    ExitCode.Unavailable,
    `kubectl port-forward to pod ${o.namespace}/${o.pod} failed${why ? `: ${why}` : ""}`,
    "it needs create on pods/portforward; or pass --gateway <URL>",
  );
}
