/** The built-in scheduler plugins and the default profile. */
import { type ProfileEntry, Registry } from "../framework/registry.ts";
import * as leastLoaded from "./least-loaded/least-loaded.ts";
import * as podAvailable from "./pod-available/pod-available.ts";
import * as resourcesFit from "./resources-fit/resources-fit.ts";

export function builtinRegistry(): Registry {
  return new Registry()
    .register(podAvailable.NAME, podAvailable.New)
    .register(resourcesFit.NAME, resourcesFit.New)
    .register(leastLoaded.NAME, leastLoaded.New);
}

export const DEFAULT_PROFILE: readonly ProfileEntry[] = [
  { name: podAvailable.NAME },
  { name: resourcesFit.NAME },
  { name: leastLoaded.NAME, weight: 1 },
];
