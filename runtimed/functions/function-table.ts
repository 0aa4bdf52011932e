/**
 * What this runtimed serves on its dataplane: Run UID → the attempt registered and READY here,
 * with the Run's name for logs. Supervisors put an entry when their registration is READY and
 * take it out when they start ending it, so the dataplane's fence check is one Map lookup.
 */
export interface Served {
  namespace: string;
  name: string;
  attempt: number;
}

export class FunctionTable {
  private readonly served = new Map<string, Served>();

  serve(uid: string, s: Served): void {
    this.served.set(uid, s);
  }

  /** Removes the entry only if it is still the given attempt's. */
  withdraw(uid: string, attempt: number): void {
    if (this.served.get(uid)?.attempt === attempt) this.served.delete(uid);
  }

  get(uid: string): Served | undefined {
    return this.served.get(uid);
  }

  get size(): number {
    return this.served.size;
  }
}
