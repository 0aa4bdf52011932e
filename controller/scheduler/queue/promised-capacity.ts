/**
 * Capacity promised to woken Runs that have not been cycled yet, per pod. A second release on the
 * same pod before those Runs are cycled must not wake more Runs for the same free slots.
 */
import type { QueuedRun } from "./queued-run.ts";

export class PromisedCapacity {
  private readonly byPod = new Map<string, Record<string, number>>();

  /** `free` minus what is already promised on the pod (a new object). */
  left(podKey: string, free: Readonly<Record<string, number>>): Record<string, number> {
    const out = { ...free };
    const p = this.byPod.get(podKey);
    if (p) for (const [n, v] of Object.entries(p)) out[n] = (out[n] ?? 0) - v;
    return out;
  }

  promise(podKey: string, qr: QueuedRun): void {
    const p = this.byPod.get(podKey) ?? {};
    for (let i = 0; i < qr.names.length; i++) {
      const n = qr.names[i] as string;
      p[n] = (p[n] ?? 0) + (qr.amounts[i] as number);
    }
    this.byPod.set(podKey, p);
    qr.promisedOn = podKey;
  }

  /** The Run was cycled (or left the queue): its promise is void. */
  release(qr: QueuedRun): void {
    const podKey = qr.promisedOn;
    if (podKey === undefined) return;
    qr.promisedOn = undefined;
    const p = this.byPod.get(podKey);
    if (!p) return;
    let empty = true;
    for (let i = 0; i < qr.names.length; i++) {
      const n = qr.names[i] as string;
      p[n] = (p[n] ?? 0) - (qr.amounts[i] as number);
      if (p[n] !== 0) empty = false;
    }
    if (empty) this.byPod.delete(podKey);
  }
}
