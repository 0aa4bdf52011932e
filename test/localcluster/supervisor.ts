/**
 * The long-running owner of a local cluster: starts the control plane and the node agent,
 * serves a small control API on a Unix socket (status, stop/start/restart a component, shutdown)
 * so tests can restart the apiserver, and tears everything down on SIGTERM.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Component, ControlPlane, planLayout } from "./control-plane.ts";
import { ManagedProcess } from "./managed-process.ts";
import { waitForNodeAndServiceAccount } from "./readiness.ts";

export interface SupervisorOptions {
  stateDir: string;
  repoRoot: string;
  nodeName: string;
  fresh: boolean;
  /** False starts the control plane only (for working on the node agent itself). */
  withNodeAgent: boolean;
  env: Record<string, string | undefined>;
}

export interface ClusterInfo {
  pid: number;
  stateDir: string;
  server: string;
  kubeconfig: string;
  nobodyKubeconfig: string;
  nodeName: string;
  controlSocket: string;
  tokens: { admin: string; nobody: string };
  readyAt: string;
  startSeconds: number;
}

type AnyComponent = Component | "node-agent";

export async function runSupervisor(opts: SupervisorOptions): Promise<void> {
  const started = performance.now();
  const layout = await planLayout(opts.stateDir, opts.repoRoot, opts.nodeName);
  const cp = new ControlPlane(layout, opts.env);
  const infoFile = join(opts.stateDir, "cluster.json");
  const socket = join(opts.stateDir, "supervisor.sock");
  rmSync(infoFile, { force: true });
  rmSync(socket, { force: true });

  const agentConfigFile = join(opts.stateDir, "node-agent.json");
  writeFileSync(
    agentConfigFile,
    JSON.stringify(
      {
        nodeName: opts.nodeName,
        kubeconfig: cp.kubeconfig("node"),
        stateDir: join(opts.stateDir, "node"),
        repoRoot: opts.repoRoot,
        imageMapFile: join(opts.repoRoot, "test/localcluster/images.yaml"),
        // A second cluster on the same host (the chaos suite's) takes a disjoint range.
        podIpRange: opts.env.KRT_POD_IP_RANGE ?? "127.1.0.0/16",
        kubeletPort: layout.kubeletPort,
        servingCertFile: cp.pki.file(`kubelet-${opts.nodeName}.crt`),
        servingKeyFile: cp.pki.file(`kubelet-${opts.nodeName}.key`),
        clientCaFile: cp.pki.file("ca.crt"),
        apiserverHost: "127.0.0.1",
        apiserverPort: layout.apiserverPort,
        allocatable: { cpu: "16", memory: "32Gi", pods: "250" },
      },
      null,
      2,
    ),
  );
  const agent = new ManagedProcess({
    name: "node-agent",
    argv: [
      process.execPath,
      join(opts.repoRoot, "test/localcluster/node-agent/main.ts"),
      "--config",
      agentConfigFile,
    ],
    cwd: opts.repoRoot,
    logFile: join(cp.logDir, "node-agent.log"),
  });

  let shuttingDown = false;
  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    server?.stop(true);
    await agent.stop(15_000);
    await cp.stop();
    rmSync(infoFile, { force: true });
    rmSync(socket, { force: true });
    process.exit(code);
  };
  process.on("SIGTERM", () => void shutdown(0));
  process.on("SIGINT", () => void shutdown(0));

  let server: ReturnType<typeof Bun.serve> | undefined;
  try {
    await cp.start({ fresh: opts.fresh });
    if (opts.withNodeAgent) {
      agent.start();
      await waitForNodeAndServiceAccount(cp.kubeconfig("admin"), opts.nodeName, Date.now() + 60_000, () => {
        if (!agent.running) throw new Error(`node agent exited; see ${join(cp.logDir, "node-agent.log")}`);
      });
    }
  } catch (e) {
    console.error(`local cluster failed to start: ${e instanceof Error ? e.message : e}`);
    await shutdown(1);
    return;
  }

  const procOf = (c: AnyComponent) => (c === "node-agent" ? agent : cp.processes.get(c));
  const start = (c: AnyComponent) => (c === "node-agent" ? agent.start() : cp.startComponent(c));
  server = Bun.serve({
    unix: socket,
    ...({ idleTimeout: 120 } as object),
    // A restart of the apiserver takes longer than the default 10 s idle timeout.
    async fetch(req) {
      const url = new URL(req.url);
      const m = /^\/components\/([a-z-]+)\/(stop|start|restart)$/.exec(url.pathname);
      if (req.method === "GET" && url.pathname === "/status") {
        const status: Record<string, unknown> = {};
        for (const c of [
          "etcd",
          "kube-apiserver",
          "kube-controller-manager",
          "kube-scheduler",
          "node-agent",
        ] as const) {
          const p = procOf(c);
          status[c] = { running: p?.running ?? false, pid: p?.pid };
        }
        return Response.json(status);
      }
      if (req.method === "POST" && m) {
        const c = m[1] as AnyComponent;
        const p = procOf(c);
        if (!p) return Response.json({ error: `unknown component ${c}` }, { status: 404 });
        if (m[2] !== "start") await p.stop(10_000);
        if (m[2] !== "stop") {
          start(c);
          if (c === "kube-apiserver") await cp.waitReady(Date.now() + 30_000);
        }
        return Response.json({ ok: true, pid: procOf(c)?.pid });
      }
      if (req.method === "POST" && url.pathname === "/shutdown") {
        setTimeout(() => void shutdown(0), 10);
        return Response.json({ ok: true });
      }
      return Response.json({ error: "not found" }, { status: 404 });
    },
  });

  const info: ClusterInfo = {
    pid: process.pid,
    stateDir: opts.stateDir,
    server: cp.server,
    kubeconfig: cp.kubeconfig("admin"),
    nobodyKubeconfig: cp.kubeconfig("nobody"),
    nodeName: opts.nodeName,
    controlSocket: socket,
    tokens: cp.tokens,
    readyAt: new Date().toISOString(),
    startSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
  writeFileSync(infoFile, JSON.stringify(info, null, 2));
  if (!existsSync(socket)) console.error("control socket missing");
  console.log(`local cluster ready in ${info.startSeconds}s`);
}
