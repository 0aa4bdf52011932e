/**
 * Which stored object an artifact input names, decided from the source Run alone (pure, so the
 * rules are tested): the reference of that name in its `status.artifactRefs` (a later attempt's
 * replaces an earlier one's there), which must point into THIS Runtime's store and under the
 * source Run's own prefix — the maintainer's download check, so an input can never be pointed at
 * another Run's objects or another store.
 */
import { type ArtifactInput, type ArtifactRef, isTerminalPhase, type Run } from "@kruntimes/api";
import { type ArtifactStoreDriver, runPrefix } from "./store.ts";

export type InputSource = { ref: ArtifactRef; key: string; dest: string } | { error: string };

/** `run/name`, how messages and logs name an input. */
export function inputName(i: ArtifactInput): string {
  return `${i.run}/${i.name}`;
}

export function resolveInput(
  source: Run,
  input: ArtifactInput,
  store: Pick<ArtifactStoreDriver, "driver" | "keyOf">,
): InputSource {
  const refs = source.status?.artifactRefs ?? [];
  const ref = refs.find((r) => r.name === input.name);
  const phase = source.status?.phase ?? "Pending";
  if (!ref) {
    const has = refs.length ? `it has ${refs.map((r) => r.name).join(", ")}` : "it has none";
    const when = isTerminalPhase(phase)
      ? `check the artifact's name (the entry's name in that Run's $KRUNTIME_ARTIFACTS_DIR)`
      : `it is still ${phase}: its artifacts are recorded when its attempt ends, so create this Run after it finished`;
    return { error: `run ${input.run} has no artifact ${input.name} (${has}); ${when}` };
  }
  const key = store.keyOf(ref.location);
  const ns = source.metadata.namespace ?? "";
  if (ref.driver !== store.driver || !key)
    return {
      error: `artifact ${inputName(input)} is in another store (${ref.location}) than this Runtime's; run this Run on a Runtime with the same spec.artifactStore as the one that stored it`,
    };
  if (!key.startsWith(runPrefix(ns, source.metadata.uid ?? "")))
    return {
      error: `artifact ${inputName(input)} points outside run ${input.run}'s own objects (${ref.location}); it is not staged`,
    };
  return { ref, key, dest: input.path ?? input.name };
}
