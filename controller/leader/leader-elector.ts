/**
 * Leader election on a coordination.k8s.io Lease, client-go's algorithm: acquire when the Lease
 * is free or its holder has not renewed for the lease duration (observed locally), renew every
 * retry period with an optimistic-concurrency update, and step down if renewing fails for the
 * renew deadline. Stepping down is final for this process (the caller exits), as in
 * kube-scheduler: half-stopped state is never reused. On shutdown the Lease is released so a
 * standby takes over at once.
 */
import { isConflict, isNotFound, type KubeClient, path, R } from "@kruntimes/kube";
import type { Logger } from "pino";
import { type Lease, microTime } from "../kube-types.ts";
import { fingerprint, heldByOther, type Observed } from "./lease-record.ts";

export interface LeaderElectorOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export interface LeaderCallbacks {
  started(): void;
  stopped(): void;
}

export class LeaderElector {
  private observed: Observed | undefined;
  private leading = false;
  private stopped = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly o: LeaderElectorOptions,
    private readonly cb: LeaderCallbacks,
    private readonly log: Logger,
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  /** Runs until stop(): acquires, then renews; calls `stopped` if leadership is lost. */
  async run(): Promise<void> {
    while (!this.stopped && !this.leading) {
      if (await this.tryAcquireOrRenew()) {
        this.leading = true;
        this.log.info({ identity: this.o.identity, lease: this.o.name }, "became leader");
        this.cb.started();
        break;
      }
      await this.sleep(this.jitter(this.o.retryPeriodMs));
    }
    let lastRenew = Date.now();
    while (!this.stopped && this.leading) {
      await this.sleep(this.o.retryPeriodMs);
      if (this.stopped) break;
      if (await this.tryAcquireOrRenew()) {
        lastRenew = Date.now();
      } else if (Date.now() - lastRenew >= this.o.renewDeadlineMs) {
        this.leading = false;
        this.log.error(
          { identity: this.o.identity },
          "could not renew the leader Lease in time; stepping down",
        );
        this.cb.stopped();
      }
    }
  }

  /** Stops the loop and, if leading, releases the Lease so a standby can take over immediately. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.client.get<Lease>(this.path());
      if (lease.spec?.holderIdentity !== this.o.identity) return;
      await this.client.replace(this.path(), {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: "",
          leaseDurationSeconds: 1,
          renewTime: microTime(Date.now()),
        },
      });
      this.log.info("released the leader Lease");
    } catch (e) {
      this.log.warn({ err: e }, "releasing the leader Lease failed");
    }
  }

  private path(): string {
    return path(R.leases, this.o.namespace, this.o.name);
  }

  private spec(prev: Lease["spec"], now: number) {
    const changing = prev?.holderIdentity !== this.o.identity;
    return {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000),
      acquireTime: changing || !prev?.acquireTime ? microTime(now) : prev.acquireTime,
      renewTime: microTime(now),
      leaseTransitions: (prev?.leaseTransitions ?? 0) + (changing && prev?.holderIdentity ? 1 : 0),
    };
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = Date.now();
    let lease: Lease;
    try {
      lease = await this.client.get<Lease>(this.path());
    } catch (e) {
      if (!isNotFound(e)) {
        this.log.warn({ err: e }, "reading the leader Lease failed");
        return false;
      }
      try {
        await this.client.create(path(R.leases, this.o.namespace), {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: this.o.name, namespace: this.o.namespace },
          spec: this.spec(undefined, now),
        });
        return true;
      } catch (err) {
        if (!isConflict(err)) this.log.warn({ err }, "creating the leader Lease failed");
        return false;
      }
    }
    const fp = fingerprint(lease);
    if (this.observed?.fingerprint !== fp) this.observed = { fingerprint: fp, atMs: now };
    if (heldByOther(lease, this.o.identity, this.observed, now, this.o.leaseDurationMs)) return false;
    try {
      const updated = await this.client.replace<Lease>(this.path(), {
        ...lease,
        spec: this.spec(lease.spec, now),
      });
      this.observed = { fingerprint: fingerprint(updated), atMs: now };
      return true;
    } catch (e) {
      if (!isConflict(e)) this.log.warn({ err: e }, "updating the leader Lease failed");
      return false;
    }
  }

  private jitter(ms: number): number {
    return ms * (1 + Math.random() * 0.2);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }
}
