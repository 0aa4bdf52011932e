/** `krt ls RUN[:PATH]`: list a directory of a session's workspace, page by page. */

import { SessionLimits } from "@kruntimes/api";
import type { FileInfo } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { FileType } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { Command, Option } from "clipanion";
import { CliError } from "../errors.ts";
import { listAll } from "../gateway/session-client.ts";
import { sessionError } from "../gateway/session-errors.ts";
import type { GlobalOptions } from "../options.ts";
import { GatewayCommand, remoteRef } from "./gateway-command.ts";

const TYPE: Record<FileType, string> = {
  [FileType.UNSPECIFIED]: "?",
  [FileType.FILE]: "file",
  [FileType.DIRECTORY]: "dir",
  [FileType.SYMLINK]: "link",
  [FileType.OTHER]: "other",
};

export class LsCommand extends GatewayCommand {
  static override paths = [["ls"]];
  static override usage = Command.Usage({
    category: "Sessions",
    description: "List a directory of a session",
    details: `
      Lists \`PATH\` (relative to the session's workspace; default the workspace itself) with one
      line per entry — type, permissions, size, modification time, name (symlinks: → target) —
      ordered by the UTF-8 bytes of the names. krt pages through the listing with ListFiles
      (\`--page-size\` entries per call, default ${SessionLimits.defaultListLimit}, at most ${SessionLimits.maxListLimit}) and prints each page as it arrives.
      \`-o json\` prints the entries as a JSON array.
    `,
    examples: [
      ["List the workspace", "krt ls sess-x7k2p"],
      ["List a directory as JSON", "krt ls sess-x7k2p:out -o json"],
    ],
  });

  target = Option.String({ name: "run[:path]" });
  pageSize = Option.String("--page-size", {
    description: "Entries per ListFiles call (default 100, at most 1000)",
  });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    if (!["table", "json"].includes(opts.output))
      throw CliError.usage(`-o ${opts.output} does not apply to krt ls`, "use -o json, or no -o for lines");
    const ref = remoteRef(this.target) ?? { run: this.target, path: "" };
    const limit = this.pageSize === undefined ? 0 : Number(this.pageSize);
    if (!Number.isInteger(limit) || limit < 0 || limit > SessionLimits.maxListLimit)
      throw CliError.usage(`--page-size "${this.pageSize}" must be 1 to ${SessionLimits.maxListLimit}`);
    const gw = await this.openGateway(opts);
    const t = { namespace: gw.namespace, run: ref.run, token: gw.token };
    const json = opts.output === "json";
    const all: unknown[] = [];
    try {
      for await (const e of listAll(gw.client, t, ref.path, limit)) {
        if (json) all.push(entryJson(e));
        else this.context.stdout.write(`${line(e)}\n`);
      }
      if (json) this.print(JSON.stringify(all, null, 2));
      return undefined;
    } catch (e) {
      throw sessionError(e, { namespace: gw.namespace, run: ref.run, via: gw.target.via, path: ref.path });
    } finally {
      gw.target.close();
    }
  }
}

function entryJson(e: FileInfo) {
  return {
    name: e.name,
    path: e.path,
    type: TYPE[e.type],
    size: Number(e.size),
    mode: `0${e.mode.toString(8)}`,
    modified: e.modifiedMicros ? new Date(Number(e.modifiedMicros / 1000n)).toISOString() : null,
    ...(e.linkTarget ? { linkTarget: e.linkTarget } : {}),
  };
}

function line(e: FileInfo): string {
  const modified = e.modifiedMicros
    ? new Date(Number(e.modifiedMicros / 1000n)).toISOString().slice(0, 19).replace("T", " ")
    : "-";
  const name =
    e.type === FileType.DIRECTORY ? `${e.name}/` : e.linkTarget ? `${e.name} -> ${e.linkTarget}` : e.name;
  return `${TYPE[e.type].padEnd(5)} ${e.mode.toString(8).padStart(4, "0")} ${String(e.size).padStart(12)}  ${modified}  ${name}`;
}
