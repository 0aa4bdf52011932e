/**
 * An in-memory apiserver for one PersistentWorkspace: JSON-patch PATCH of the object and of its
 * status (`test` ops answer 422 like kube-apiserver), DELETE with a UID precondition (409), and
 * finalizers holding a deleted object. Every request is recorded. Test infrastructure only.
 */
import type { PersistentWorkspace } from "@kruntimes/api";
import { type KubeClient, KubeError } from "@kruntimes/kube";

type Op = { op: string; path: string; value?: unknown };

function walk(doc: unknown, path: string): [Record<string, unknown> | unknown[], string] {
  const parts = path.split("/").slice(1);
  let cur = doc as Record<string, unknown>;
  for (const p of parts.slice(0, -1)) {
    const next = cur[p];
    if (next === undefined || next === null) throw new Error(`no ${p}`);
    cur = next as Record<string, unknown>;
  }
  return [cur, parts[parts.length - 1] as string];
}

function apply(doc: unknown, ops: Op[]): void {
  for (const o of ops) {
    if (o.op === "test" && o.path === "/status" && (doc as { status?: unknown }).status === undefined) {
      if (o.value !== null) throw new Error("test /status failed");
      continue;
    }
    const [parent, key] = walk(doc, o.path);
    const at = (k: string) => (Array.isArray(parent) ? parent[Number(k)] : parent[k]);
    if (o.op === "test") {
      if (JSON.stringify(at(key) ?? null) !== JSON.stringify(o.value ?? null))
        throw new Error(`test ${o.path}`);
    } else if (o.op === "add" || o.op === "replace") {
      if (Array.isArray(parent)) {
        if (key === "-") parent.push(structuredClone(o.value));
        else parent.splice(Number(key), o.op === "add" ? 0 : 1, structuredClone(o.value));
      } else parent[key] = structuredClone(o.value);
    } else if (o.op === "remove") {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
    }
  }
}

export class FakeWorkspaceApi {
  readonly requests: { method: string; path: string; body?: unknown }[] = [];
  stored: PersistentWorkspace | undefined;

  constructor(ws: PersistentWorkspace) {
    this.stored = structuredClone(ws);
  }

  get client(): KubeClient {
    const self = this;
    return {
      async patch<T>(path: string, body: unknown): Promise<T> {
        self.requests.push({ method: "PATCH", path, body });
        if (!self.stored) throw new KubeError("PATCH", path, 404, { message: "not found" });
        const next = structuredClone(self.stored);
        try {
          apply(next, body as Op[]);
        } catch (e) {
          throw new KubeError("PATCH", path, 422, { message: String(e) });
        }
        self.stored = next;
        if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) self.stored = undefined;
        return structuredClone(next) as T;
      },
      async delete<T>(path: string, body?: unknown): Promise<T> {
        self.requests.push({ method: "DELETE", path, body });
        if (!self.stored) throw new KubeError("DELETE", path, 404, { message: "not found" });
        const uid = (body as { preconditions?: { uid?: string } })?.preconditions?.uid;
        if (uid && uid !== self.stored.metadata.uid)
          throw new KubeError("DELETE", path, 409, { message: "uid" });
        if (self.stored.metadata.finalizers?.length)
          self.stored.metadata.deletionTimestamp = "2026-01-09T00:00:00Z";
        else self.stored = undefined;
        return {} as T;
      },
    } as unknown as KubeClient;
  }
}
