/** `krt artifact list <run>`: the Run's `status.artifactRefs` (needs only `get` on the Run). */
import type { ArtifactRef } from "@kruntimes/api";
import { Command, Option } from "clipanion";
import YAML from "yaml";
import { KrtCommand } from "../base-command.ts";
import type { GlobalOptions } from "../options.ts";
import { renderTable } from "../output/table.ts";
import { getRun } from "../runs/fetch.ts";

function humanBytes(n: number | undefined): string {
  if (n === undefined) return "";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n}B` : `${v.toFixed(1)}${units[i]}`;
}

export class ArtifactListCommand extends KrtCommand {
  static override paths = [["artifact", "list"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "List the artifacts a Run stored",
    details:
      "Reads `status.artifactRefs` of the Run: name, type (file or archive = a directory as tar.gz), size, sha256 digest, the attempt that stored it and where. -o json|yaml prints the references as they are.",
    examples: [["List a Run's artifacts", "krt artifact list build-x7k2p"]],
  });

  runName = Option.String({ name: "run" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    const run = await getRun(client, namespace, this.runName);
    const refs = run.status?.artifactRefs ?? [];
    if (opts.output === "json") return void this.print(JSON.stringify(refs, null, 2));
    if (opts.output === "yaml") return void this.print(YAML.stringify(refs));
    if (opts.output === "name") return void this.print(refs.map((r) => r.name).join("\n"));
    if (refs.length === 0) {
      this.context.stderr.write(`run ${this.runName} has no artifacts\n`);
      return undefined;
    }
    const wide = opts.output === "wide";
    this.print(
      renderTable<ArtifactRef>(
        refs,
        [
          { header: "NAME", value: (r) => r.name },
          { header: "TYPE", value: (r) => r.type },
          { header: "SIZE", value: (r) => humanBytes(r.size) },
          { header: "ATTEMPT", value: (r) => String(r.attempt ?? "") },
          { header: "DIGEST", value: (r) => (wide ? (r.digest ?? "") : (r.digest ?? "").slice(0, 19)) },
          { header: "LOCATION", value: (r) => r.location, wide: true },
          { header: "CREATED", value: (r) => r.created ?? "", wide: true },
        ],
        wide,
      ),
    );
    return undefined;
  }
}
