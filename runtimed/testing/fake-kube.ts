/**
 * An in-memory stand-in for the apiserver's Run endpoints the function supervisor uses: GET and
 * JSON-patch PATCH of a Run and its status, with `test` ops answering 422 like kube-apiserver
 * does when a fence fails, and every accepted write recorded. Test infrastructure only.
 */
import type { Run } from "@kruntimes/api";
import { type KubeClient, KubeError } from "@kruntimes/kube";

type Op = { op: string; path: string; value?: unknown };

function pointer(path: string): string[] {
  return path
    .split("/")
    .slice(1)
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function parentOf(doc: unknown, parts: string[]): [Record<string, unknown> | unknown[], string] {
  let cur = doc as Record<string, unknown>;
  for (const p of parts.slice(0, -1)) {
    const next = (cur as Record<string, unknown>)[p];
    if (next === undefined || next === null) throw new Error(`no ${p}`);
    cur = next as Record<string, unknown>;
  }
  return [cur, parts[parts.length - 1] as string];
}

export function applyPatch(doc: unknown, ops: Op[]): void {
  for (const o of ops) {
    const [parent, key] = parentOf(doc, pointer(o.path));
    if (o.op === "test") {
      const v = Array.isArray(parent) ? parent[Number(key)] : (parent as Record<string, unknown>)[key];
      if (JSON.stringify(v ?? null) !== JSON.stringify(o.value ?? null))
        throw new Error(`test ${o.path} failed`);
    } else if (o.op === "add" || o.op === "replace") {
      if (Array.isArray(parent)) {
        if (key === "-") parent.push(structuredClone(o.value));
        else parent.splice(Number(key), o.op === "add" ? 0 : 1, structuredClone(o.value));
      } else (parent as Record<string, unknown>)[key] = structuredClone(o.value);
    } else if (o.op === "remove") {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete (parent as Record<string, unknown>)[key];
    }
  }
}

export class FakeKube {
  readonly writes: { subresource: "status" | "main"; run: Run }[] = [];
  private run: Run | undefined;
  private rv = 1;
  /** Called after each accepted write with the stored Run (as a watch would deliver it). */
  onChange: (run: Run) => void = () => {};

  constructor(run: Run) {
    this.run = structuredClone(run);
    this.run.metadata.resourceVersion = String(this.rv);
  }

  get stored(): Run | undefined {
    return this.run ? structuredClone(this.run) : undefined;
  }

  statusWrites(): Run[] {
    return this.writes.filter((w) => w.subresource === "status").map((w) => w.run);
  }

  /** A change made by someone else (the user, the controller). */
  mutate(f: (r: Run) => void): void {
    if (!this.run) return;
    f(this.run);
    this.run.metadata.resourceVersion = String(++this.rv);
    if (this.run.metadata.deletionTimestamp && !this.run.metadata.finalizers?.length) this.run = undefined;
    if (this.run) this.onChange(structuredClone(this.run));
  }

  readonly client = {
    get: async <T>(path: string): Promise<T> => {
      if (!this.run) throw new KubeError("GET", path, 404, { message: "not found" });
      return structuredClone(this.run) as T;
    },
    patch: async <T>(path: string, ops: Op[]): Promise<T> => {
      if (!this.run) throw new KubeError("PATCH", path, 404, { message: "not found" });
      const status = path.endsWith("/status");
      const next = structuredClone(this.run);
      try {
        applyPatch(next, ops);
      } catch (e) {
        throw new KubeError("PATCH", path, 422, { message: (e as Error).message });
      }
      if (!status) next.status = this.run.status;
      else next.metadata = this.run.metadata;
      next.metadata.resourceVersion = String(++this.rv);
      this.run = next;
      this.writes.push({ subresource: status ? "status" : "main", run: structuredClone(next) });
      if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) this.run = undefined;
      queueMicrotask(() => this.onChange(structuredClone(next)));
      return structuredClone(next) as T;
    },
  } as unknown as KubeClient;
}
