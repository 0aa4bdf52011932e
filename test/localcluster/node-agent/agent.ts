/**
 * The node agent: wires the Node heartbeat, the pod informer (pods bound to this node), a work
 * queue of pod keys whose handler is the pod worker's level-triggered sync, and the log endpoint.
 */
import { Informer, KubeClient, loadKubeconfigFile, resourcePath } from "@kruntimes/kube";
import type { Logger } from "pino";
import { ApiObjectSource } from "./api/object-source.ts";
import type { Pod } from "./api/types.ts";
import type { AgentConfig } from "./config.ts";
import { ImageMap } from "./images/image-map.ts";
import { startLogServer } from "./logs/log-server.ts";
import { IpAllocator } from "./network/ip-allocator.ts";
import { NodeHeartbeat } from "./node/node-heartbeat.ts";
import { PodWorker } from "./pods/pod-worker.ts";
import { WorkQueue } from "./queue/work-queue.ts";
import { ProcessRegistry } from "./runtime/process-registry.ts";
import { VolumeManager } from "./volumes/volume-manager.ts";

export class NodeAgent {
  private readonly client: KubeClient;
  private readonly workers = new Map<string, PodWorker>();
  private readonly informer: Informer<Pod>;
  private readonly queue: WorkQueue;
  private readonly heartbeat: NodeHeartbeat;
  private readonly registry: ProcessRegistry;
  private readonly images: ImageMap;
  private readonly ips: IpAllocator;
  private readonly volumes: VolumeManager;
  private readonly objects: ApiObjectSource;
  private logServer?: ReturnType<typeof startLogServer>;
  private resync?: Timer;

  constructor(
    private readonly cfg: AgentConfig,
    private readonly log: Logger,
  ) {
    this.client = new KubeClient(loadKubeconfigFile(cfg.kubeconfig));
    this.registry = new ProcessRegistry(cfg.stateDir);
    this.images = ImageMap.load(cfg.imageMapFile, cfg.repoRoot);
    this.ips = new IpAllocator(cfg.podIpRange);
    this.objects = new ApiObjectSource(this.client);
    this.volumes = new VolumeManager(this.client, this.objects);
    this.heartbeat = new NodeHeartbeat(cfg, this.client, log);
    this.informer = new Informer<Pod>(this.client, resourcePath({ version: "v1", plural: "pods" }), {
      fieldSelector: `spec.nodeName=${cfg.nodeName}`,
    });
    this.queue = new WorkQueue((key) => this.sync(key), {
      workers: 8,
      retryInitialMs: 200,
      retryMaxMs: 10_000,
      onError: (key, err, retryInMs) =>
        log.warn({ pod: key, err: String(err), retryInMs }, "pod sync failed"),
    });
  }

  async start(): Promise<void> {
    const left = this.registry.killLeftovers();
    if (left.length) this.log.info({ groups: left.length }, "killed processes left by a previous agent");
    await this.heartbeat.register();
    this.heartbeat.start();
    this.informer.on({
      add: (p) => this.queue.add(keyOf(p)),
      update: (p) => this.queue.add(keyOf(p)),
      delete: (p) => this.queue.add(keyOf(p)),
      relisted: () => {
        for (const k of this.workers.keys()) this.queue.add(k);
      },
      error: (e) => this.log.warn({ err: String(e) }, "pod watch failed; relisting"),
    });
    this.informer.start();
    await this.informer.waitForSync();
    this.queue.start();
    this.resync = setInterval(() => {
      for (const k of this.workers.keys()) this.queue.add(k);
    }, this.cfg.podResyncMs);
    if (this.cfg.kubeletPort) {
      this.logServer = startLogServer({
        port: this.cfg.kubeletPort,
        certFile: this.cfg.servingCertFile,
        keyFile: this.cfg.servingKeyFile,
        caFile: this.cfg.clientCaFile,
        find: (ns, pod, container) => {
          const w = this.workers.get(`${ns}/${pod}`);
          const runner = w?.runnerOf(container);
          return runner && { runner, live: () => runner.running };
        },
      });
    }
    this.log.info({ node: this.cfg.nodeName, pods: this.informer.size }, "node agent running");
  }

  private async sync(key: string): Promise<{ requeueAfterMs?: number } | undefined> {
    const pod = this.informer.get(key);
    let w = this.workers.get(key);
    if (w && (!pod || pod.metadata.uid !== w.pod.metadata.uid)) {
      if (!w.done) {
        this.log.info({ pod: key }, "pod object gone; killing its containers");
        w.cleanup();
      }
      this.workers.delete(key);
      w = undefined;
    }
    if (!pod) return undefined;
    if (pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") {
      if (!w && !pod.metadata.deletionTimestamp) return undefined;
    }
    if (!w) {
      w = new PodWorker(pod, {
        config: this.cfg,
        client: this.client,
        objects: this.objects,
        images: this.images,
        ips: this.ips,
        volumes: this.volumes,
        registry: this.registry,
        log: this.log,
        poke: () => this.queue.add(key),
      });
      this.workers.set(key, w);
    } else if (
      Number(pod.metadata.resourceVersion ?? 0) >= Number(w.pod.metadata.resourceVersion ?? 0) ||
      pod.metadata.deletionTimestamp
    ) {
      w.pod = pod;
    }
    if (w.done) return undefined;
    const after = await w.sync();
    return after === undefined ? undefined : { requeueAfterMs: after };
  }

  /** Stops every pod's processes (SIGTERM, grace, SIGKILL) and the agent's own loops. */
  async stop(): Promise<void> {
    clearInterval(this.resync);
    this.heartbeat.stop();
    this.informer.stop();
    this.queue.stop();
    this.logServer?.stop(true);
    await Promise.all([...this.workers.values()].map((w) => w.shutdown(this.cfg.shutdownGraceMs)));
  }
}

const keyOf = (p: Pod) => `${p.metadata.namespace}/${p.metadata.name}`;
