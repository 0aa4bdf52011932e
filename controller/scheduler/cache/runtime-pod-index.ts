/** Pods per Runtime, each list kept sorted by name: the stable array a cycle iterates. */
import type { PodInfo } from "./pod-info.ts";

export class RuntimePodIndex {
  private readonly byRuntime = new Map<string, PodInfo[]>();

  get(runtimeKey: string): readonly PodInfo[] {
    return this.byRuntime.get(runtimeKey) ?? [];
  }

  add(info: PodInfo): void {
    const list = [...this.get(info.runtimeKey), info].sort((a, b) => (a.name < b.name ? -1 : 1));
    this.byRuntime.set(info.runtimeKey, list);
  }

  remove(info: PodInfo): void {
    const list = this.get(info.runtimeKey).filter((p) => p !== info);
    if (list.length) this.byRuntime.set(info.runtimeKey, list);
    else this.byRuntime.delete(info.runtimeKey);
  }
}
