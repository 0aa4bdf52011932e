/** `krt version`: the client's build info and, when reachable, the API server's version. */
import { Command } from "clipanion";
import YAML from "yaml";
import { KrtCommand } from "../base-command.ts";
import { buildInfo } from "../build-info.ts";
import { CliError } from "../errors.ts";
import type { GlobalOptions } from "../options.ts";

interface ServerVersion {
  gitVersion?: string;
  platform?: string;
}

export class VersionCommand extends KrtCommand {
  static override paths = [["version"]];
  static override usage = Command.Usage({
    category: "General",
    description: "Print the krt version and the cluster's version",
    details: "The server part is best effort: without a reachable cluster it says why and still exits 0.",
    examples: [["As JSON", "krt version -o json"]],
  });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    let server: { version?: string; platform?: string; error?: string };
    try {
      const { client } = this.connect(opts);
      const v = await client.request<ServerVersion>("GET", "/version", { signal: AbortSignal.timeout(3000) });
      server = { version: v.gitVersion, platform: v.platform };
    } catch (e) {
      server = { error: CliError.from(e).message };
    }
    const data = { client: { ...buildInfo, bun: Bun.version }, server };
    if (opts.output === "json") this.print(JSON.stringify(data, null, 2));
    else if (opts.output === "yaml") this.print(YAML.stringify(data));
    else
      this.print(
        [
          `krt ${buildInfo.version} (commit ${buildInfo.commit}, built ${buildInfo.buildTime}, bun ${Bun.version})`,
          server.version
            ? `server ${server.version}${server.platform ? ` (${server.platform})` : ""}`
            : `server: unavailable: ${server.error}`,
        ].join("\n"),
      );
    return undefined;
  }
}
