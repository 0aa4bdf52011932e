/**
 * `krt run --manifest`: a Run written in YAML or JSON (one document), checked for the fields krt
 * needs, with the namespace and name the flags give and the created-micros annotation stamped.
 * The API server validates everything else.
 */
import { Annotations, API_VERSION, RUN_KIND, type Run } from "@kruntimes/api";
import YAML from "yaml";
import { CliError, unreadable } from "../errors.ts";

export interface ManifestOverrides {
  /** -n, when given: wins over the manifest's namespace. */
  namespace?: string;
  /** The context's namespace: used when neither -n nor the manifest names one. */
  defaultNamespace: string;
  /** --name: wins over the manifest's name and generateName. */
  name?: string;
  createdMicros: number;
}

export async function readManifest(file: string, o: ManifestOverrides): Promise<Run> {
  let text: string;
  try {
    text = file === "-" ? await new Response(Bun.stdin.stream()).text() : await Bun.file(file).text();
  } catch (e) {
    throw unreadable("--manifest", file, e);
  }
  return parseManifest(text, file, o);
}

export function parseManifest(text: string, file: string, o: ManifestOverrides): Run {
  const docs = YAML.parseAllDocuments(text).filter((d) => d.contents !== null);
  if (docs.length !== 1)
    throw CliError.usage(`--manifest ${file}: expected one Run, found ${docs.length} documents`);
  const doc = docs[0] as YAML.Document;
  // The YAML library's message carries a code frame over several lines; its first line says it all.
  if (doc.errors.length)
    throw CliError.usage(
      `--manifest ${file}: not valid YAML: ${doc.errors[0]?.message.split("\n")[0]?.replace(/:$/, "")}`,
      "check the indentation and brackets at that line",
    );
  const run = doc.toJS() as Partial<Run> | null;
  if (!run || typeof run !== "object" || run.kind !== RUN_KIND || run.apiVersion !== API_VERSION)
    throw CliError.usage(`--manifest ${file}: not a Run (want apiVersion ${API_VERSION}, kind ${RUN_KIND})`);
  if (!run.spec?.runtime) throw CliError.usage(`--manifest ${file}: spec.runtime is missing`);
  const meta = { ...(run.metadata ?? {}) };
  if (o.name !== undefined) {
    meta.name = o.name;
    delete meta.generateName;
  }
  if (!meta.name && !meta.generateName) meta.generateName = `${run.spec.runtime}-`;
  meta.namespace = o.namespace ?? meta.namespace ?? o.defaultNamespace;
  meta.annotations = { ...(meta.annotations ?? {}), [Annotations.createdMicros]: String(o.createdMicros) };
  return { ...(run as Run), metadata: meta };
}
