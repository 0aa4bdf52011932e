/**
 * Where Runs are placed, by label, for Run affinity: every Run that holds a pod — confirmed by
 * the informer or assumed by this scheduler and not yet confirmed — with its labels and the pod
 * incarnation (`<namespace>/<pod>@<uid>`, so Runs on a replaced pod never count for its
 * successor). Per namespace (affinity is namespace-local), label postings ("k=v" and "k") find
 * the Runs a selector can match without looking at the others, and a one-label selector's count
 * per pod is kept up to date, so the common case costs one map read per pod.
 *
 * A scheduling cycle reads the index synchronously and nothing changes it while the cycle runs
 * (one thread; binds and watch events land between cycles), so what a cycle sees is an immutable
 * snapshot of actual assignments and assumed binds. The assume at the end of a cycle is its
 * first write, and the next cycle sees it.
 */
import type { CompiledTerm } from "./affinity-terms.ts";
import { type Labels, labelPosting, matches, type Selector } from "./label-selector.ts";

export interface PlacedRun {
  readonly key: string;
  readonly namespace: string;
  /** `<namespace>/<pod>`. */
  readonly podKey: string;
  /** The pod incarnation: `<namespace>/<pod>@<uid>`. */
  readonly domain: string;
  labels: Labels;
  /** Required anti-affinity terms: the placed Run refuses matching Runs beside it (symmetry). */
  readonly anti?: readonly CompiledTerm[];
}

export interface PlacementListener {
  /** A Run now holds a pod, or a placed Run's labels changed. */
  placed(run: PlacedRun): void;
  /** A Run no longer holds its pod. */
  removed(run: PlacedRun): void;
}

/** The read side plugins and the queue use. */
export interface PlacementView {
  /**
   * Pod incarnation → how many placed Runs of `namespace` (other than `exclude`) match; only pods
   * with at least one are present.
   */
  countsOn(namespace: string, sel: Selector, exclude: string): ReadonlyMap<string, number>;
  /** Placed Runs of `namespace` (other than `exclude`) on `domain` that match. */
  countOn(namespace: string, domain: string, sel: Selector, exclude: string): number;
  /** Whether any placed Run of `namespace` (other than `exclude`) matches, on any pod. */
  anyMatch(namespace: string, sel: Selector, exclude: string): boolean;
  /** Whether some placed Run of the namespace has required anti-affinity. */
  hasRefusers(namespace: string): boolean;
  /** Pod incarnations where a placed Run's required anti-affinity refuses a Run with `labels`. */
  refusing(namespace: string, labels: Labels, exclude: string): ReadonlySet<string> | undefined;
  /** Whether a placed Run on `domain` refuses a Run with `labels`. */
  refusesOn(domain: string, labels: Labels, exclude: string): boolean;
  /** Whether any placed Run on `domain` has required anti-affinity. */
  hasRefusersOn(domain: string): boolean;
  /** The placed Runs on a pod incarnation. */
  runsOn(domain: string): Iterable<PlacedRun>;
}

interface Refusal {
  readonly run: PlacedRun;
  readonly term: CompiledTerm;
}

class NamespaceIndex {
  readonly runs = new Map<string, PlacedRun>();
  readonly postings = new Map<string, Set<PlacedRun>>();
  /** posting → domain → placed Runs carrying it there. */
  readonly counts = new Map<string, Map<string, number>>();
  /** Required anti-affinity terms of placed Runs, by a posting a Run they refuse must carry. */
  readonly refusalsByPosting = new Map<string, Set<Refusal>>();
  /** Terms with only negative requirements: checked against every incoming Run. */
  readonly refusalsAny = new Set<Refusal>();
  /** Each refusing Run's own entries, so removing it touches only them. */
  readonly refusalsOf = new Map<PlacedRun, Refusal[]>();
  refusers = 0;
}

const NO_COUNTS: ReadonlyMap<string, number> = new Map();
const NO_RUNS: ReadonlySet<PlacedRun> = new Set();

export function domainOf(podKey: string, uid: string): string {
  return `${podKey}@${uid}`;
}

export class PlacementIndex implements PlacementView {
  private readonly namespaces = new Map<string, NamespaceIndex>();
  private readonly byDomain = new Map<string, Set<PlacedRun>>();
  private readonly refusersByDomain = new Map<string, number>();
  private listener: PlacementListener | undefined;

  /** One listener (the scheduler, for wake-ups); set once it exists. */
  listen(l: PlacementListener): void {
    this.listener = l;
  }

  get size(): number {
    let n = 0;
    for (const ns of this.namespaces.values()) n += ns.runs.size;
    return n;
  }

  get(key: string, namespace: string): PlacedRun | undefined {
    return this.namespaces.get(namespace)?.runs.get(key);
  }

  add(run: PlacedRun): void {
    let ns = this.namespaces.get(run.namespace);
    if (!ns) {
      ns = new NamespaceIndex();
      this.namespaces.set(run.namespace, ns);
    }
    const prev = ns.runs.get(run.key);
    if (prev) this.detach(ns, prev);
    ns.runs.set(run.key, run);
    this.attachLabels(ns, run);
    let onPod = this.byDomain.get(run.domain);
    if (!onPod) {
      onPod = new Set();
      this.byDomain.set(run.domain, onPod);
    }
    onPod.add(run);
    if (run.anti?.length) {
      ns.refusers++;
      this.refusersByDomain.set(run.domain, (this.refusersByDomain.get(run.domain) ?? 0) + 1);
      const own: Refusal[] = [];
      for (const term of run.anti) {
        const r = { run, term };
        own.push(r);
        const first = term.selector.postings[0];
        if (!first) ns.refusalsAny.add(r);
        else for (const p of first) setIn(ns.refusalsByPosting, p).add(r);
      }
      ns.refusalsOf.set(run, own);
    }
    this.listener?.placed(run);
  }

  remove(key: string, namespace: string): void {
    const ns = this.namespaces.get(namespace);
    const run = ns?.runs.get(key);
    if (!ns || !run) return;
    this.detach(ns, run);
    if (ns.runs.size === 0) this.namespaces.delete(namespace);
    this.listener?.removed(run);
  }

  /** A placed Run's labels changed (they are mutable metadata). */
  relabel(key: string, namespace: string, labels: Labels): void {
    const ns = this.namespaces.get(namespace);
    const run = ns?.runs.get(key);
    if (!ns || !run) return;
    this.detachLabels(ns, run);
    run.labels = labels;
    this.attachLabels(ns, run);
    this.listener?.placed(run);
  }

  // ---- reads ----

  countsOn(namespace: string, sel: Selector, exclude: string): ReadonlyMap<string, number> {
    const ns = this.namespaces.get(namespace);
    if (!ns) return NO_COUNTS;
    const self = ns.runs.get(exclude);
    const excluded = self !== undefined && matches(sel, self.labels);
    if (sel.simple !== undefined) {
      const counts = ns.counts.get(sel.simple) ?? NO_COUNTS;
      if (!excluded) return counts;
      const copy = new Map(counts);
      const n = (copy.get(self.domain) ?? 0) - 1;
      if (n > 0) copy.set(self.domain, n);
      else copy.delete(self.domain);
      return copy;
    }
    const out = new Map<string, number>();
    for (const run of this.candidates(ns, sel)) {
      if (run.key !== exclude && matches(sel, run.labels))
        out.set(run.domain, (out.get(run.domain) ?? 0) + 1);
    }
    return out;
  }

  countOn(namespace: string, domain: string, sel: Selector, exclude: string): number {
    const ns = this.namespaces.get(namespace);
    if (!ns) return 0;
    if (sel.simple !== undefined) {
      let n = ns.counts.get(sel.simple)?.get(domain) ?? 0;
      const self = ns.runs.get(exclude);
      if (self?.domain === domain && matches(sel, self.labels)) n--;
      return n;
    }
    let n = 0;
    for (const run of this.byDomain.get(domain) ?? NO_RUNS) {
      if (run.namespace === namespace && run.key !== exclude && matches(sel, run.labels)) n++;
    }
    return n;
  }

  anyMatch(namespace: string, sel: Selector, exclude: string): boolean {
    const ns = this.namespaces.get(namespace);
    if (!ns) return false;
    for (const run of this.candidates(ns, sel)) {
      if (run.key !== exclude && matches(sel, run.labels)) return true;
    }
    return false;
  }

  hasRefusers(namespace: string): boolean {
    return (this.namespaces.get(namespace)?.refusers ?? 0) > 0;
  }

  refusing(namespace: string, labels: Labels, exclude: string): ReadonlySet<string> | undefined {
    const ns = this.namespaces.get(namespace);
    if (!ns || ns.refusers === 0) return undefined;
    let out: Set<string> | undefined;
    const check = (r: Refusal) => {
      if (r.run.key === exclude || !matches(r.term.selector, labels)) return;
      out ??= new Set();
      out.add(r.run.domain);
    };
    for (const r of ns.refusalsAny) check(r);
    for (const k in labels) {
      const byValue = ns.refusalsByPosting.get(labelPosting(k, labels[k] as string));
      if (byValue) for (const r of byValue) check(r);
      const byKey = ns.refusalsByPosting.get(k);
      if (byKey) for (const r of byKey) check(r);
    }
    return out;
  }

  refusesOn(domain: string, labels: Labels, exclude: string): boolean {
    if (!this.hasRefusersOn(domain)) return false;
    for (const run of this.byDomain.get(domain) ?? NO_RUNS) {
      if (run.key === exclude || !run.anti) continue;
      for (const t of run.anti) if (matches(t.selector, labels)) return true;
    }
    return false;
  }

  hasRefusersOn(domain: string): boolean {
    return (this.refusersByDomain.get(domain) ?? 0) > 0;
  }

  runsOn(domain: string): Iterable<PlacedRun> {
    return this.byDomain.get(domain) ?? NO_RUNS;
  }

  // ---- internals ----

  /** The Runs a selector can match: the smallest posting list of one of its positive requirements. */
  private candidates(ns: NamespaceIndex, sel: Selector): Iterable<PlacedRun> {
    if (sel.postings.length === 0) return ns.runs.values();
    let best: readonly string[] | undefined;
    let bestSize = Number.POSITIVE_INFINITY;
    for (const alts of sel.postings) {
      let size = 0;
      for (const p of alts) size += ns.postings.get(p)?.size ?? 0;
      if (size < bestSize) {
        best = alts;
        bestSize = size;
      }
    }
    if (bestSize === 0 || !best) return NO_RUNS;
    if (best.length === 1) return ns.postings.get(best[0] as string) ?? NO_RUNS;
    const lists = best.map((p) => ns.postings.get(p) ?? NO_RUNS);
    return (function* () {
      for (const l of lists) yield* l;
    })();
  }

  private attachLabels(ns: NamespaceIndex, run: PlacedRun): void {
    for (const [k, v] of Object.entries(run.labels)) {
      this.post(ns, labelPosting(k, v), run, 1);
      this.post(ns, k, run, 1);
    }
  }

  private detachLabels(ns: NamespaceIndex, run: PlacedRun): void {
    for (const [k, v] of Object.entries(run.labels)) {
      this.post(ns, labelPosting(k, v), run, -1);
      this.post(ns, k, run, -1);
    }
  }

  private post(ns: NamespaceIndex, posting: string, run: PlacedRun, delta: 1 | -1): void {
    if (delta > 0) setIn(ns.postings, posting).add(run);
    else {
      const s = ns.postings.get(posting);
      s?.delete(run);
      if (s?.size === 0) ns.postings.delete(posting);
    }
    let perPod = ns.counts.get(posting);
    if (!perPod) {
      if (delta < 0) return;
      perPod = new Map();
      ns.counts.set(posting, perPod);
    }
    const n = (perPod.get(run.domain) ?? 0) + delta;
    if (n > 0) perPod.set(run.domain, n);
    else perPod.delete(run.domain);
    if (perPod.size === 0) ns.counts.delete(posting);
  }

  private detach(ns: NamespaceIndex, run: PlacedRun): void {
    ns.runs.delete(run.key);
    this.detachLabels(ns, run);
    const onPod = this.byDomain.get(run.domain);
    onPod?.delete(run);
    if (onPod?.size === 0) this.byDomain.delete(run.domain);
    if (run.anti?.length) {
      ns.refusers--;
      const n = (this.refusersByDomain.get(run.domain) ?? 1) - 1;
      if (n > 0) this.refusersByDomain.set(run.domain, n);
      else this.refusersByDomain.delete(run.domain);
      for (const r of ns.refusalsOf.get(run) ?? []) {
        ns.refusalsAny.delete(r);
        for (const p of r.term.selector.postings[0] ?? []) {
          const s = ns.refusalsByPosting.get(p);
          s?.delete(r);
          if (s?.size === 0) ns.refusalsByPosting.delete(p);
        }
      }
      ns.refusalsOf.delete(run);
    }
  }
}

function setIn<K, V>(m: Map<K, Set<V>>, k: K): Set<V> {
  let s = m.get(k);
  if (!s) {
    s = new Set();
    m.set(k, s);
  }
  return s;
}
