/**
 * Runs one probe or lifecycle handler against a container: exec inside its mount and UTS
 * namespaces (nsenter), HTTP GET, TCP connect, or gRPC health. Success and failure are data;
 * only programming errors throw.
 */
import type {
  ContainerPort,
  ExecAction,
  HTTPGetAction,
  ProbeHandler,
  TCPSocketAction,
} from "../api/types.ts";
import { grpcHealthCheck, SERVING } from "./grpc-health.ts";

export interface HandlerTarget {
  podIP: string;
  ports: ContainerPort[];
  /** The container's process (the namespace owner); undefined when it is not running. */
  pid(): number | undefined;
  env: Record<string, string>;
}

export interface HandlerOutcome {
  ok: boolean;
  /** Probe output or the reason of a failure (kubelet puts this into events and messages). */
  output: string;
}

export function resolvePort(port: number | string, ports: ContainerPort[]): number {
  if (typeof port === "number") return port;
  if (/^[0-9]+$/.test(port)) return Number(port);
  const p = ports.find((x) => x.name === port);
  if (!p) throw new Error(`port "${port}" is not a named port of the container`);
  return p.containerPort;
}

async function execHandler(a: ExecAction, t: HandlerTarget, timeoutMs: number): Promise<HandlerOutcome> {
  const pid = t.pid();
  if (!pid) return { ok: false, output: "container is not running" };
  if (!a.command?.length) return { ok: false, output: "exec: no command" };
  const proc = Bun.spawn(["nsenter", "--mount", "--uts", `--target=${pid}`, "--wd", "--", ...a.command], {
    env: t.env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  if (proc.signalCode === "SIGKILL") return { ok: false, output: `command timed out after ${timeoutMs}ms` };
  return { ok: code === 0, output: (out + err).slice(0, 1024) || `exit code ${code}` };
}

async function httpHandler(a: HTTPGetAction, t: HandlerTarget, timeoutMs: number): Promise<HandlerOutcome> {
  const port = resolvePort(a.port, t.ports);
  const host = a.host || t.podIP;
  const scheme = (a.scheme ?? "HTTP").toLowerCase();
  const p = a.path ? (a.path.startsWith("/") ? a.path : `/${a.path}`) : "/";
  const url = `${scheme}://${host.includes(":") ? `[${host}]` : host}:${port}${p}`;
  const headers: Record<string, string> = { "user-agent": "kube-probe/1.37", accept: "*/*" };
  for (const h of a.httpHeaders ?? []) headers[h.name.toLowerCase()] = h.value;
  try {
    const res = await fetch(url, {
      headers,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
      // kubelet does not verify probe targets' certificates either.
      tls: { rejectUnauthorized: false },
    } as RequestInit);
    const body = (await res.text()).slice(0, 1024);
    // kubelet: 200 <= code < 400 is success (a redirect counts as success).
    return { ok: res.status >= 200 && res.status < 400, output: `HTTP ${res.status} ${body}`.trim() };
  } catch (e) {
    return { ok: false, output: `GET ${url}: ${e instanceof Error ? e.message : e}` };
  }
}

async function tcpHandler(a: TCPSocketAction, t: HandlerTarget, timeoutMs: number): Promise<HandlerOutcome> {
  const port = resolvePort(a.port, t.ports);
  const host = a.host || t.podIP;
  let timer: Timer | undefined;
  try {
    const socket = await Promise.race([
      Bun.connect({ hostname: host, port, socket: { data() {}, error() {} } }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs}ms`)), timeoutMs);
      }),
    ]);
    socket.end();
    return { ok: true, output: `connected to ${host}:${port}` };
  } catch (e) {
    return { ok: false, output: `dial tcp ${host}:${port}: ${e instanceof Error ? e.message : e}` };
  } finally {
    clearTimeout(timer);
  }
}

export async function runHandler(
  h: ProbeHandler,
  t: HandlerTarget,
  timeoutMs: number,
): Promise<HandlerOutcome> {
  try {
    if (h.exec) return await execHandler(h.exec, t, timeoutMs);
    if (h.httpGet) return await httpHandler(h.httpGet, t, timeoutMs);
    if (h.tcpSocket) return await tcpHandler(h.tcpSocket, t, timeoutMs);
    if (h.grpc) {
      const status = await grpcHealthCheck(t.podIP, h.grpc.port, h.grpc.service ?? "", timeoutMs);
      return { ok: status === SERVING, output: `grpc health status ${status}` };
    }
    return { ok: false, output: "handler has no action" };
  } catch (e) {
    return { ok: false, output: e instanceof Error ? e.message : String(e) };
  }
}
