/**
 * Which WorkflowRun each child belongs to, from the `kruntimes.io/workflowrun` label, so an event
 * on a child Run, job workspace or nested WorkflowRun reaches its parent's key without a scan.
 */
import { Labels } from "@kruntimes/api";

interface Child {
  metadata: { name?: string; namespace?: string; labels?: Record<string, string> };
}

export type ChildKind = "runs" | "workspaces" | "children";

export class WorkflowIndex {
  private readonly byParent: Record<ChildKind, Map<string, Set<string>>> = {
    runs: new Map(),
    workspaces: new Map(),
    children: new Map(),
  };
  private readonly parentOf: Record<ChildKind, Map<string, string>> = {
    runs: new Map(),
    workspaces: new Map(),
    children: new Map(),
  };

  /** Records the child; returns its parent's key (undefined when it has none). */
  changed(kind: ChildKind, obj: Child): string | undefined {
    const ns = obj.metadata.namespace ?? "";
    const name = obj.metadata.name ?? "";
    const parent = obj.metadata.labels?.[Labels.workflowRun];
    const key = `${ns}/${name}`;
    const before = this.parentOf[kind].get(key);
    if (before && before !== `${ns}/${parent}`) this.forget(kind, key);
    if (!parent) return before;
    const parentKey = `${ns}/${parent}`;
    this.parentOf[kind].set(key, parentKey);
    let set = this.byParent[kind].get(parentKey);
    if (!set) {
      set = new Set();
      this.byParent[kind].set(parentKey, set);
    }
    set.add(name);
    return parentKey;
  }

  /** Forgets the child; returns its parent's key. */
  deleted(kind: ChildKind, obj: Child): string | undefined {
    return this.forget(kind, `${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}`);
  }

  private forget(kind: ChildKind, key: string): string | undefined {
    const parentKey = this.parentOf[kind].get(key);
    if (!parentKey) return undefined;
    this.parentOf[kind].delete(key);
    const set = this.byParent[kind].get(parentKey);
    set?.delete(key.slice(key.indexOf("/") + 1));
    if (set && set.size === 0) this.byParent[kind].delete(parentKey);
    return parentKey;
  }

  /** Names of the parent's children of one kind. */
  of(kind: ChildKind, parentKey: string): readonly string[] {
    return [...(this.byParent[kind].get(parentKey) ?? [])];
  }
}
