/**
 * Leader election on a coordination.k8s.io Lease, client-go's algorithm: acquire when the Lease
 * is free or its holder has not renewed for the lease duration (observed locally), renew every
 * retry period with an optimistic-concurrency update, and step down if renewing fails for the
 * renew deadline. Stepping down is final for this process (the caller exits), as in
 * kube-scheduler: half-stopped state is never reused. On shutdown the Lease is released (after any
 * renewal in flight has settled, so the release cannot be overwritten by our own renewal), and a
 * standby watches the Lease so it tries to acquire on the release event instead of at its next
 * retry tick, and sees each renewal as it happens, so after a holder dies it tries just after the
 * lease runs out.
 */
import { isConflict, isNotFound, type KubeClient, path, R, watchStream } from "@kruntimes/kube";
import type { Logger } from "pino";
import { type Lease, microTime } from "../kube-types.ts";
import { fingerprint, heldByOther, type Observed } from "./lease-record.ts";

/** A standby tries this long after the observed lease ran out (clock granularity, timer lateness). */
const EXPIRY_MARGIN_MS = 25;

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
  /** Ends the current sleep early; `poked` remembers a wake-up that came while not sleeping. */
  private wake: (() => void) | undefined;
  private poked = false;
  /** The acquire/renew call in progress, so stop() releases only after it settled. */
  private inflight: Promise<boolean> | undefined;
  private readonly watchAbort = new AbortController();

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
    void this.watchForRelease();
    while (!this.stopped && !this.leading) {
      if (await this.attempt()) {
        this.leading = true;
        // Acquired while stop() was waiting for this attempt: stop() releases it; do not lead.
        if (this.stopped) break;
        this.log.info({ identity: this.o.identity, lease: this.o.name }, "became leader");
        this.watchAbort.abort();
        this.cb.started();
        break;
      }
      await this.sleep(this.standbyDelayMs());
    }
    let lastRenew = Date.now();
    while (!this.stopped && this.leading) {
      await this.sleep(this.o.retryPeriodMs);
      if (this.stopped) break;
      if (await this.attempt()) {
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
    this.poke();
    this.watchAbort.abort();
    // A renewal already sent must settle first: released before it lands, the Lease would be
    // taken back by our own renewal (or the release would conflict with it) and a standby would
    // wait a whole lease duration.
    await this.inflight?.catch(() => false);
    if (!this.leading) return;
    this.leading = false;
    for (let tries = 1; tries <= 3; tries++) {
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
        this.log.info({ identity: this.o.identity }, "released the leader Lease");
        return;
      } catch (e) {
        if (isConflict(e) && tries < 3) continue;
        this.log.warn({ err: e }, "releasing the leader Lease failed; a standby takes over when it expires");
        return;
      }
    }
  }

  /** One acquire-or-renew, remembered as in flight until it settles. */
  private attempt(): Promise<boolean> {
    const p = this.tryAcquireOrRenew();
    this.inflight = p;
    return p;
  }

  /**
   * While standing by: a watch on the Lease wakes the retry loop as soon as the holder releases
   * it (holder cleared) or it is deleted, so a graceful handover does not wait for a retry tick.
   * The loop's periodic attempts stay the fallback when the watch is down.
   */
  private async watchForRelease(): Promise<void> {
    const signal = this.watchAbort.signal;
    const query = { fieldSelector: `metadata.name=${this.o.name}` };
    while (!signal.aborted) {
      try {
        for await (const ev of watchStream<Lease>(
          this.client,
          path(R.leases, this.o.namespace),
          query,
          signal,
        )) {
          const released =
            ev.type === "DELETED" || (ev.type !== "BOOKMARK" && !ev.object.spec?.holderIdentity);
          // Every renewal is seen when it happens, so the lease is known to expire exactly
          // leaseDuration after it (not after the next poll that would have noticed it).
          if (ev.type !== "DELETED" && ev.type !== "BOOKMARK" && !this.leading) {
            const fp = fingerprint(ev.object);
            if (this.observed?.fingerprint !== fp) this.observed = { fingerprint: fp, atMs: Date.now() };
          }
          if (released && !this.leading) {
            this.log.info(
              { identity: this.o.identity },
              "saw the leader Lease released; trying to acquire now",
            );
            this.poke();
          }
        }
      } catch (e) {
        if (signal.aborted) return;
        this.log.debug({ err: e }, "leader Lease watch ended; retrying");
      }
      if (!signal.aborted) await Bun.sleep(this.o.retryPeriodMs);
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
      leaseTransitions: (prev?.leaseTransitions ?? 0) + (changing && prev ? 1 : 0),
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
    // Once stopping, never take the Lease (back): stop() is about to release it or has.
    if (this.stopped) return false;
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

  /**
   * How long a standby sleeps before its next attempt: the retry period, but no later than just
   * after the observed holder's lease runs out, so a leader that died (SIGKILL, node loss) is
   * replaced about one lease duration after its last renewal rather than up to a retry period
   * later.
   */
  private standbyDelayMs(): number {
    const retry = this.jitter(this.o.retryPeriodMs);
    if (!this.observed) return retry;
    const expiresIn = this.observed.atMs + this.o.leaseDurationMs - Date.now();
    return Math.max(0, Math.min(retry, expiresIn + EXPIRY_MARGIN_MS));
  }

  private jitter(ms: number): number {
    return ms * (1 + Math.random() * 0.2);
  }

  private poke(): void {
    if (this.wake) this.wake();
    else this.poked = true;
  }

  private sleep(ms: number): Promise<void> {
    if (this.poked) {
      this.poked = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
