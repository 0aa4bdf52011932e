/**
 * Name → factory registry and the profile that picks plugins from it. A factory validates its
 * args and throws on bad ones, so a broken profile fails at start, not mid-cycle.
 */
import {
  type FilterPlugin,
  isFilter,
  isPreFilter,
  isReserve,
  isScore,
  type Plugin,
  type PreFilterPlugin,
  type ReservePlugin,
  type ScorePlugin,
} from "./plugin.ts";

export type PluginFactory = (args: unknown) => Plugin;

export interface ProfileEntry {
  name: string;
  args?: unknown;
  /** Multiplies the plugin's score (score plugins only). Default 1. */
  weight?: number;
}

export interface Framework {
  readonly preFilter: readonly PreFilterPlugin[];
  readonly filter: readonly FilterPlugin[];
  readonly score: readonly { plugin: ScorePlugin; weight: number }[];
  readonly reserve: readonly ReservePlugin[];
}

export class Registry {
  private readonly factories = new Map<string, PluginFactory>();

  register(name: string, factory: PluginFactory): this {
    if (this.factories.has(name)) throw new Error(`scheduler plugin "${name}" is registered twice`);
    this.factories.set(name, factory);
    return this;
  }

  names(): string[] {
    return [...this.factories.keys()];
  }

  /** Builds the framework for a profile; plugins run in profile order at each extension point. */
  build(profile: readonly ProfileEntry[]): Framework {
    const fw = {
      preFilter: [] as PreFilterPlugin[],
      filter: [] as FilterPlugin[],
      score: [] as { plugin: ScorePlugin; weight: number }[],
      reserve: [] as ReservePlugin[],
    };
    const seen = new Set<string>();
    for (const entry of profile) {
      const factory = this.factories.get(entry.name);
      if (!factory) {
        throw new Error(`unknown scheduler plugin "${entry.name}" (known: ${this.names().join(", ")})`);
      }
      if (seen.has(entry.name)) throw new Error(`scheduler plugin "${entry.name}" is in the profile twice`);
      seen.add(entry.name);
      const plugin = factory(entry.args);
      if (isPreFilter(plugin)) fw.preFilter.push(plugin);
      if (isFilter(plugin)) fw.filter.push(plugin);
      if (isScore(plugin)) {
        const weight = entry.weight ?? 1;
        if (!(weight > 0)) throw new Error(`scheduler plugin "${entry.name}": weight must be > 0`);
        fw.score.push({ plugin, weight });
      }
      if (isReserve(plugin)) fw.reserve.push(plugin);
    }
    if (fw.filter.length === 0) throw new Error("the scheduler profile has no filter plugin");
    return fw;
  }
}
