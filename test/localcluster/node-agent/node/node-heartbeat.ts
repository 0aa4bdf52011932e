/**
 * The Node object and its heartbeats: registers the node (NodeRestriction lets a node create only
 * itself), keeps its Lease in kube-node-lease renewed and its status (conditions, capacity,
 * addresses, kubelet endpoint) fresh, so the node lifecycle controller keeps it Ready.
 */
import { isConflict, isNotFound, type KubeClient, path, R } from "@kruntimes/kube";
import type { Logger } from "pino";
import type { AgentConfig } from "../config.ts";

const KUBELET_VERSION = "v1.37.2";

function microTime(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export class NodeHeartbeat {
  private timers: Timer[] = [];
  private nodeUid = "";

  constructor(
    private readonly cfg: AgentConfig,
    private readonly client: KubeClient,
    private readonly log: Logger,
  ) {}

  private status() {
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const c = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      reason,
      message,
      lastHeartbeatTime: now,
    });
    const resources = { ...this.cfg.allocatable, "ephemeral-storage": "100Gi" };
    return {
      capacity: resources,
      allocatable: resources,
      addresses: [
        { type: "InternalIP", address: "127.0.0.1" },
        { type: "Hostname", address: this.cfg.nodeName },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: this.cfg.kubeletPort } },
      nodeInfo: {
        machineID: "krt-local",
        systemUUID: "krt-local",
        bootID: "krt-local",
        kernelVersion: "local",
        osImage: "kruntimes local node agent (host processes)",
        containerRuntimeVersion: "krtlocal://0.1.0",
        kubeletVersion: KUBELET_VERSION,
        kubeProxyVersion: "",
        operatingSystem: "linux",
        architecture: process.arch === "x64" ? "amd64" : process.arch,
      },
      conditions: [
        c("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        c("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        c("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        c("Ready", "True", "KubeletReady", "local node agent is posting ready status"),
      ],
    };
  }

  async register(): Promise<void> {
    const name = this.cfg.nodeName;
    let node: { metadata: { uid?: string } };
    try {
      node = await this.client.get(path(R.nodes, undefined, name));
    } catch (e) {
      if (!isNotFound(e)) throw e;
      node = await this.client.create(path(R.nodes), {
        apiVersion: "v1",
        kind: "Node",
        metadata: {
          name,
          labels: {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kruntimes.io/local-node-agent": "true",
          },
        },
        spec: {},
      });
      this.log.info("node registered");
    }
    this.nodeUid = node.metadata.uid ?? "";
    await this.postStatus();
    await this.renewLease();
  }

  async postStatus(): Promise<void> {
    await this.client.patch(
      path(R.nodes, undefined, this.cfg.nodeName, "status"),
      { status: this.status() },
      "strategic",
    );
  }

  async renewLease(): Promise<void> {
    const p = path(R.leases, "kube-node-lease", this.cfg.nodeName);
    const spec = { holderIdentity: this.cfg.nodeName, leaseDurationSeconds: 40, renewTime: microTime() };
    try {
      await this.client.patch(p, { spec }, "merge");
    } catch (e) {
      if (!isNotFound(e)) throw e;
      await this.client
        .create(path(R.leases, "kube-node-lease"), {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: {
            name: this.cfg.nodeName,
            ownerReferences: [{ apiVersion: "v1", kind: "Node", name: this.cfg.nodeName, uid: this.nodeUid }],
          },
          spec,
        })
        .catch((err) => {
          if (!isConflict(err)) throw err;
        });
    }
  }

  /** Periodic heartbeats; failures (an apiserver restart) are logged and retried next period. */
  start(): void {
    const every = (ms: number, what: string, fn: () => Promise<void>) =>
      this.timers.push(
        setInterval(() => {
          fn().catch((e) => this.log.warn({ err: String(e) }, `${what} failed; retrying next period`));
        }, ms),
      );
    every(this.cfg.leaseRenewMs, "lease renewal", () => this.renewLease());
    every(this.cfg.nodeStatusMs, "node status update", () => this.postStatus());
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
  }
}
