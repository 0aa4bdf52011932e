/**
 * The pod's heartbeat, exactly as the runtimed contract says: a Lease named after the pod, held
 * by the pod's UID, owned by the pod, labelled with the Runtime, renewed every interval. The
 * scheduler only places Runs on pods whose Lease is fresh; readiness also requires it held.
 */
import { Labels } from "@kruntimes/api";
import { isNotFound, type KubeClient, path, R } from "@kruntimes/kube";
import { microTime } from "../clock.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { RuntimedOptions } from "../options.ts";

export class LeaseKeeper {
  private lastRenewMs = 0;
  private running = false;
  private wake: (() => void) | undefined;
  private readonly leasePath: string;

  constructor(
    private readonly client: KubeClient,
    private readonly o: RuntimedOptions,
    private readonly log: Logger,
    private readonly metrics: Metrics,
  ) {
    this.leasePath = path(R.leases, o.pod.namespace, o.pod.name);
  }

  /** True while the last successful renewal is younger than the Lease duration. */
  get held(): boolean {
    return this.lastRenewMs > 0 && Date.now() - this.lastRenewMs < this.o.leaseDurationSeconds * 1000;
  }

  /** Renews once (awaited, so start-up knows the Lease is held), then keeps renewing. */
  async start(): Promise<void> {
    this.running = true;
    await this.renew();
    void this.loop();
  }

  /** Stops renewing and deletes the Lease, so the scheduler stops placing Runs here at once. */
  async release(): Promise<void> {
    this.running = false;
    this.wake?.();
    try {
      await this.client.delete(this.leasePath);
    } catch (e) {
      if (!isNotFound(e)) this.log.warn({ err: e }, "releasing the heartbeat Lease failed");
    }
  }

  private lease(now: number) {
    const { pod } = this.o;
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name: pod.name,
        namespace: pod.namespace,
        labels: { [Labels.runtime]: this.o.runtime },
        ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: pod.name, uid: pod.uid }],
      },
      spec: {
        holderIdentity: pod.uid,
        leaseDurationSeconds: this.o.leaseDurationSeconds,
        acquireTime: microTime(now),
        renewTime: microTime(now),
      },
    };
  }

  private async renew(): Promise<void> {
    const now = Date.now();
    // A renewal that is not answered within half the Lease duration is given up, so one silent
    // connection cannot stall the heartbeat loop for good (the chaos suite's cut-off runtimed).
    const timeoutMs = (this.o.leaseDurationSeconds * 1000) / 2;
    try {
      try {
        await this.client.request("PATCH", this.leasePath, {
          body: { spec: { holderIdentity: this.o.pod.uid, renewTime: microTime(now) } },
          contentType: "application/merge-patch+json",
          timeoutMs,
        });
      } catch (e) {
        if (!isNotFound(e)) throw e;
        await this.client.request("POST", path(R.leases, this.o.pod.namespace), {
          body: this.lease(now),
          timeoutMs,
        });
      }
      this.lastRenewMs = now;
      this.metrics.leaseRenewals.inc({ result: "ok" });
    } catch (e) {
      this.metrics.leaseRenewals.inc({ result: "error" });
      this.log.warn({ err: e }, "renewing the heartbeat Lease failed");
    }
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, this.o.heartbeatIntervalMs);
      });
      if (this.running) await this.renew();
    }
  }
}
