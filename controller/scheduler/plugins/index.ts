/** The built-in scheduler plugins and the default profile. */
import { type ProfileEntry, Registry } from "../framework/registry.ts";
import * as leastLoaded from "./least-loaded/least-loaded.ts";
import * as podAvailable from "./pod-available/pod-available.ts";
import * as resourcesFit from "./resources-fit/resources-fit.ts";
import * as workspace from "./workspace/workspace.ts";

/** What plugins read besides the cycle's Run and pods: the controller's informers. */
export interface PluginDeps {
  /** PersistentWorkspaces by `namespace/name` (the `workspace` plugin). */
  workspaces?: workspace.WorkspaceLookup;
}

export function builtinRegistry(deps: PluginDeps = {}): Registry {
  return new Registry()
    .register(podAvailable.NAME, podAvailable.New)
    .register(resourcesFit.NAME, resourcesFit.New)
    .register(leastLoaded.NAME, leastLoaded.New)
    .register(workspace.NAME, workspace.factory(deps.workspaces));
}

export const DEFAULT_PROFILE: readonly ProfileEntry[] = [
  // First: a Run pinned to its workspace's pod rejects every other pod with one comparison.
  { name: workspace.NAME },
  { name: podAvailable.NAME },
  { name: resourcesFit.NAME },
  { name: leastLoaded.NAME, weight: 1 },
];
