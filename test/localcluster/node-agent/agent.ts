/**
 * The node agent: wires the Node heartbeat, the informer of the pods bound to this node, a work
 * queue of pod UIDs whose handler is the pod syncer, and the kubelet log endpoint.
 */
import { dirname } from "node:path";
import { Informer, KubeClient, loadKubeconfigFile, path, R } from "@kruntimes/kube";
import type { Logger } from "pino";
import { ApiClaimSource } from "./api/claim-source.ts";
import { ApiObjectSource } from "./api/object-source.ts";
import type { Pod } from "./api/types.ts";
import type { AgentConfig } from "./config.ts";
import { ImageMapFile } from "./images/image-map-file.ts";
import { attemptLogs, podDirsByName } from "./logs/log-files.ts";
import { type LogSource, startLogServer } from "./logs/log-server.ts";
import { IpAllocator } from "./network/ip-allocator.ts";
import { NodeHeartbeat } from "./node/node-heartbeat.ts";
import type { PodContext } from "./pods/pod-context.ts";
import { ApiPodEvents } from "./pods/pod-events.ts";
import { PodStatusWriter } from "./pods/pod-status-writer.ts";
import { PodSyncer } from "./pods/pod-syncer.ts";
import { WorkQueue } from "./queue/work-queue.ts";
import { findHostTools } from "./runtime/container-process.ts";
import { acquireInstanceLock } from "./runtime/instance-lock.ts";
import { ProcessRegistry } from "./runtime/process-registry.ts";
import { ServiceAccountTokens } from "./volumes/service-account-tokens.ts";

export interface AgentEnv {
  PATH: string;
  HOME: string;
}

export class NodeAgent {
  private readonly client: KubeClient;
  private readonly informer: Informer<Pod>;
  private readonly queue: WorkQueue;
  private readonly heartbeat: NodeHeartbeat;
  private readonly registry: ProcessRegistry;
  private readonly syncer: PodSyncer;
  private logServer?: ReturnType<typeof startLogServer>;
  private resync?: Timer;

  constructor(
    private readonly cfg: AgentConfig,
    private readonly log: Logger,
    env: AgentEnv,
  ) {
    this.client = new KubeClient(loadKubeconfigFile(cfg.kubeconfig));
    this.registry = new ProcessRegistry(cfg.stateDir);
    const images = new ImageMapFile(cfg.imageMapFile, cfg.repoRoot, (e) =>
      log.error({ err: String(e) }, "image map unreadable; keeping the last good one"),
    );
    const tokens = new ServiceAccountTokens(this.client);
    this.queue = new WorkQueue((uid) => this.syncer.sync(uid), {
      workers: 8,
      retryInitialMs: 200,
      retryMaxMs: 10_000,
      onError: (uid, err, retryInMs) =>
        log.warn({ uid, err: String(err), retryInMs }, "pod sync failed; retrying"),
    });
    const ctx: PodContext = {
      log,
      images: () => images.current(),
      objects: new ApiObjectSource(this.client),
      claims: new ApiClaimSource(this.client),
      events: new ApiPodEvents(this.client, cfg.nodeName, log),
      tokens,
      tools: findHostTools(env.PATH),
      registry: this.registry,
      service: { apiserverHost: cfg.apiserverHost, apiserverPort: cfg.apiserverPort },
      hostIP: "127.0.0.1",
      allocatable: cfg.allocatable,
      // The agent's own bun comes first, so images.yaml can say `bun` whatever the PATH is.
      defaultPath: `${dirname(process.execPath)}:${env.PATH}`,
      defaultHome: env.HOME,
      restartBackoffInitialMs: cfg.restartBackoffInitialMs,
      restartBackoffMaxMs: cfg.restartBackoffMaxMs,
      enqueue: (uid) => this.queue.add(uid),
    };
    this.syncer = new PodSyncer({
      ctx,
      ips: new IpAllocator(cfg.podIpRange),
      writer: new PodStatusWriter(this.client, log),
      tokens,
      stateDir: cfg.stateDir,
      resyncMs: cfg.podResyncMs,
    });
    this.heartbeat = new NodeHeartbeat(cfg, this.client, log);
    this.informer = new Informer<Pod>(this.client, path(R.pods), {
      fieldSelector: `spec.nodeName=${cfg.nodeName}`,
    });
  }

  async start(): Promise<void> {
    acquireInstanceLock(this.cfg.stateDir);
    // The log port first: if it cannot be bound, fail before any container runs.
    if (this.cfg.kubeletPort) {
      this.logServer = startLogServer({
        port: this.cfg.kubeletPort,
        certFile: this.cfg.servingCertFile,
        keyFile: this.cfg.servingKeyFile,
        caFile: this.cfg.clientCaFile,
        find: (ns, pod, container) => this.logSource(ns, pod, container),
      });
    }
    const left = this.registry.killLeftovers();
    if (left.length) this.log.info({ groups: left.length }, "killed processes left by a previous agent");
    await this.heartbeat.register();
    this.heartbeat.start();
    this.informer.on({
      add: (p) => this.changed(p),
      update: (p) => this.changed(p),
      delete: (p) => {
        this.syncer.vanished(p);
        this.queue.add(p.metadata.uid!);
      },
      relisted: () => {
        for (const uid of this.syncer.keys()) this.queue.add(uid);
      },
      error: (e) => this.log.warn({ err: String(e) }, "pod watch failed; relisting"),
    });
    this.informer.start();
    await this.informer.waitForSync();
    this.syncer.adoptExisting();
    this.queue.start();
    // Level-triggered safety net: every pod is looked at again now and then, whatever happened.
    this.resync = setInterval(() => {
      for (const uid of this.syncer.keys()) this.queue.add(uid);
    }, this.cfg.podResyncMs);
    this.log.info({ pods: this.informer.size }, "node agent running");
  }

  private changed(p: Pod): void {
    this.syncer.observe(p);
    this.queue.add(p.metadata.uid!);
  }

  private logSource(ns: string, pod: string, container: string): LogSource | undefined {
    const rt = this.syncer.find(ns, pod);
    const dir = rt ? rt.sandbox.podDir : podDirsByName(this.cfg.stateDir, ns, pod)[0];
    if (!dir) return undefined;
    const c = rt?.all.find((x) => x.spec.name === container);
    if (rt && !c) return undefined;
    return {
      files: () => attemptLogs(dir, container),
      live: (file) => c?.running === true && c.logFile(c.restartCount) === file,
    };
  }

  /** Stops every pod's processes (SIGTERM, grace, SIGKILL) and the agent's loops; writes nothing. */
  async stop(): Promise<void> {
    clearInterval(this.resync);
    this.heartbeat.stop();
    this.informer.stop();
    this.queue.stop();
    this.logServer?.stop(true);
    await this.syncer.shutdown(this.cfg.shutdownGraceMs);
  }
}
