/**
 * The Node object and its heartbeats: registers the node (NodeRestriction lets a node create only
 * itself), keeps its Lease in kube-node-lease renewed and its status (conditions, capacity,
 * addresses, kubelet endpoint) fresh, so the node lifecycle controller keeps it Ready.
 */
import { isConflict, isNotFound, type KubeClient, path, R } from "@kruntimes/kube";
import type { Logger } from "pino";
import { apiTime } from "../api/api-time.ts";
import type { AgentConfig } from "../config.ts";
import { nodeLabels, nodeStatus } from "./node-status.ts";

function microTime(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export class NodeHeartbeat {
  private timers: Timer[] = [];
  private nodeUid = "";
  private readonly since = apiTime();

  constructor(
    private readonly cfg: AgentConfig,
    private readonly client: KubeClient,
    private readonly log: Logger,
  ) {}

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
          labels: nodeLabels(name),
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
      {
        status: nodeStatus({
          nodeName: this.cfg.nodeName,
          kubeletPort: this.cfg.kubeletPort,
          allocatable: this.cfg.allocatable,
          since: this.since,
        }),
      },
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
