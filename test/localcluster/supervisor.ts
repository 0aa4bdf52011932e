/**
 * The long-running owner of a local cluster: starts the control plane and the node agent,
 * serves a small control API on a Unix socket (status, stop/start/restart a component, shutdown)
 * so tests can restart the apiserver, and tears everything down on SIGTERM.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Component, ControlPlane, planLayout } from "./control-plane.ts";
import { ManagedProcess } from "./managed-process.ts";
import { type LocalNode, planNodes } from "./nodes.ts";
import { waitForNodeAndServiceAccount } from "./readiness.ts";
import { startServiceProxy, writeEgressConfig } from "./service-proxy.ts";

export interface SupervisorOptions {
  stateDir: string;
  repoRoot: string;
  /** Node 1's name; nodes 2 and 3 add -2/-3. */
  nodeName: string;
  /** 1..3 node agents (KRT_NODES / --nodes). */
  nodeCount: number;
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
  /** Node 1 (the only node of a one-node cluster). */
  nodeName: string;
  /** Every node (absent in cluster.json files written before several nodes existed). */
  nodes?: LocalNode[];
  controlSocket: string;
  tokens: { admin: string; nobody: string };
  readyAt: string;
  startSeconds: number;
}

/** A control-plane component or a node agent (`node-agent`, `node-agent-2`, …). */
type AnyComponent = Component | string;

export async function runSupervisor(opts: SupervisorOptions): Promise<void> {
  const started = performance.now();
  const nodes = planNodes({
    baseName: opts.nodeName,
    count: opts.nodeCount,
    podIpRange: opts.env.KRT_POD_IP_RANGE ?? "127.1.0.0/16",
    clusterDir: opts.stateDir,
  });
  const layout = await planLayout(opts.stateDir, opts.repoRoot, opts.nodeName, opts.nodeCount);
  const cp = new ControlPlane(
    layout,
    opts.env,
    nodes.map((n) => n.name),
  );
  const infoFile = join(opts.stateDir, "cluster.json");
  const socket = join(opts.stateDir, "supervisor.sock");
  rmSync(infoFile, { force: true });
  rmSync(socket, { force: true });

  const agents = new Map<string, ManagedProcess>();
  for (const node of nodes) {
    const suffix = node.index === 1 ? "" : `-${node.index}`;
    const agentConfigFile = join(opts.stateDir, `node-agent${suffix}.json`);
    writeFileSync(
      agentConfigFile,
      JSON.stringify(
        {
          nodeName: node.name,
          kubeconfig: cp.nodeKubeconfig(node.index),
          stateDir: node.stateDir,
          repoRoot: opts.repoRoot,
          imageMapFile: join(opts.repoRoot, "test/localcluster/images.yaml"),
          // A second cluster on the same host (the chaos suite's) takes a disjoint range;
          // several nodes split the cluster's range between them (nodes.ts).
          podIpRange: node.podIpRange,
          kubeletPort: cp.kubeletPort(node.index),
          servingCertFile: cp.pki.file(`kubelet-${node.name}.crt`),
          servingKeyFile: cp.pki.file(`kubelet-${node.name}.key`),
          clientCaFile: cp.pki.file("ca.crt"),
          apiserverHost: "127.0.0.1",
          apiserverPort: layout.apiserverPort,
          allocatable: { cpu: "16", memory: "32Gi", pods: "250" },
        },
        null,
        2,
      ),
    );
    agents.set(
      node.component,
      new ManagedProcess({
        name: node.component,
        argv: [
          process.execPath,
          join(opts.repoRoot, "test/localcluster/node-agent/main.ts"),
          "--config",
          agentConfigFile,
        ],
        cwd: opts.repoRoot,
        logFile: join(cp.logDir, `${node.component}.log`),
      }),
    );
  }

  let shuttingDown = false;
  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    server?.stop(true);
    await Promise.all([...agents.values()].map((a) => a.stop(15_000)));
    await cp.stop();
    rmSync(infoFile, { force: true });
    rmSync(socket, { force: true });
    process.exit(code);
  };
  process.on("SIGTERM", () => void shutdown(0));
  process.on("SIGINT", () => void shutdown(0));

  let server: ReturnType<typeof Bun.serve> | undefined;
  try {
    // Before the apiserver: its egress configuration names the proxy's socket.
    const proxySocket = join(opts.stateDir, "service-proxy.sock");
    await startServiceProxy(proxySocket, cp.kubeconfig("admin"), (line) =>
      console.error(`service proxy: ${line}`),
    );
    writeEgressConfig(cp.egressConfigFile, proxySocket);
    await cp.start({ fresh: opts.fresh });
    if (opts.withNodeAgent) {
      for (const a of agents.values()) a.start();
      const deadline = Date.now() + 60_000;
      for (const node of nodes) {
        const a = agents.get(node.component) as ManagedProcess;
        await waitForNodeAndServiceAccount(cp.kubeconfig("admin"), node.name, deadline, () => {
          if (!a.running)
            throw new Error(
              `node agent ${node.name} exited; see ${join(cp.logDir, `${node.component}.log`)}`,
            );
        });
      }
    }
  } catch (e) {
    console.error(`local cluster failed to start: ${e instanceof Error ? e.message : e}`);
    await shutdown(1);
    return;
  }

  const procOf = (c: AnyComponent) => agents.get(c) ?? cp.processes.get(c as Component);
  const start = (c: AnyComponent) => {
    const a = agents.get(c);
    if (a) a.start();
    else cp.startComponent(c as Component);
  };
  server = Bun.serve({
    unix: socket,
    ...({ idleTimeout: 120 } as object),
    // A restart of the apiserver takes longer than the default 10 s idle timeout.
    async fetch(req) {
      const url = new URL(req.url);
      const m = /^\/components\/([a-z0-9-]+)\/(stop|start|restart)$/.exec(url.pathname);
      if (req.method === "GET" && url.pathname === "/status") {
        const status: Record<string, unknown> = {};
        for (const c of [
          "etcd",
          "kube-apiserver",
          "kube-controller-manager",
          "kube-scheduler",
          ...agents.keys(),
        ]) {
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
    nodes,
    controlSocket: socket,
    tokens: cp.tokens,
    readyAt: new Date().toISOString(),
    startSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
  writeFileSync(infoFile, JSON.stringify(info, null, 2));
  if (!existsSync(socket)) console.error("control socket missing");
  console.log(`local cluster ready in ${info.startSeconds}s`);
}
