/** `krt cp LOCAL RUN:PATH` / `krt cp RUN:PATH LOCAL`: copy a file into or out of a session. */
import { createWriteStream } from "node:fs";
import { stat as fsStat, rename, unlink } from "node:fs/promises";
import { basename } from "node:path";
import { FileType, WriteMode } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { Command, Option } from "clipanion";
import { CliError } from "../errors.ts";
import { download, stat, upload } from "../gateway/session-client.ts";
import { sessionError } from "../gateway/session-errors.ts";
import type { GlobalOptions } from "../options.ts";
import { GatewayCommand, remoteRef } from "./gateway-command.ts";

const MODES: Record<string, WriteMode> = {
  create: WriteMode.CREATE,
  truncate: WriteMode.TRUNCATE,
  append: WriteMode.APPEND,
};

export class CpCommand extends GatewayCommand {
  static override paths = [["cp"]];
  static override usage = Command.Usage({
    category: "Sessions",
    description: "Copy a file into or out of a session",
    details: `
      \`krt cp LOCAL RUN:PATH\` uploads a local file (\`-\` = stdin) into the session's workspace in
      chunks of 1 MiB sharing one upload; the file appears at PATH atomically when the last chunk
      arrives (readers see the old or the whole new file). \`--mode create\` refuses to replace an
      existing file, \`append\` appends; \`--parents\` creates missing directories. A PATH ending in
      \`/\` (or empty) receives the local file's name.

      \`krt cp RUN:PATH LOCAL\` downloads a file as it is read (\`-\` = stdout); the local file is
      written to a temporary name and renamed when complete. PATH is relative to the workspace.
      The caller needs \`create\` on \`runs/session\` of the Run; gateway flags as for \`krt invoke\`.
    `,
    examples: [
      ["Upload a file", "krt cp ./data.csv sess-x7k2p:input/data.csv --parents"],
      ["Download a result", "krt cp sess-x7k2p:out/report.pdf ./report.pdf"],
      ["Stream to stdout", "krt cp sess-x7k2p:log.txt - | tail"],
    ],
  });

  source = Option.String({ name: "source" });
  destination = Option.String({ name: "destination" });
  mode = Option.String("--mode", { description: "Upload: create, truncate (default) or append" });
  parents = Option.Boolean("--parents,-p", false, {
    description: "Upload: create missing parent directories",
  });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    const from = remoteRef(this.source);
    const to = remoteRef(this.destination);
    if ((from && to) || (!from && !to))
      throw CliError.usage(
        "exactly one of the two paths must be RUN:PATH",
        "krt cp LOCAL RUN:PATH uploads, krt cp RUN:PATH LOCAL downloads",
      );
    const mode = MODES[this.mode ?? "truncate"];
    if (mode === undefined) throw CliError.usage(`--mode "${this.mode}"`, "use create, truncate or append");
    const gw = await this.openGateway(opts);
    const ref = (from ?? to) as { run: string; path: string };
    const t = { namespace: gw.namespace, run: ref.run, token: gw.token };
    let path = ref.path;
    try {
      if (to) {
        if (path === "" || this.destination.endsWith("/"))
          path = `${path === "" ? "" : `${path}/`}${basename(this.source)}`;
        const source =
          this.source === "-"
            ? (Bun.stdin.stream() as unknown as AsyncIterable<Uint8Array>)
            : (Bun.file(this.source).stream() as unknown as AsyncIterable<Uint8Array>);
        if (this.source !== "-") await this.checkLocalFile(this.source);
        const info = await upload(gw.client, t, path, source, { mode, parents: this.parents });
        this.context.stderr.write(
          `${this.source} → ${ref.run}:${info?.path ?? path} (${info?.size ?? 0n} bytes)\n`,
        );
        return undefined;
      }
      const info = await stat(gw.client, t, path);
      if (info?.type === FileType.DIRECTORY)
        throw CliError.usage(
          `${ref.run}:${path} is a directory`,
          `list it with \`krt ls ${ref.run}:${path}\``,
        );
      if (this.destination === "-") {
        await download(gw.client, t, path, (c) => this.writeStdout(c));
        return undefined;
      }
      await this.downloadTo(gw.client, t, path);
      return undefined;
    } catch (e) {
      throw sessionError(e, { namespace: gw.namespace, run: ref.run, via: gw.target.via, path });
    } finally {
      gw.target.close();
    }
  }

  private async checkLocalFile(file: string): Promise<void> {
    const s = await fsStat(file).catch(() => undefined);
    if (!s) throw CliError.usage(`${file}: no such file`);
    if (!s.isFile())
      throw CliError.usage(`${file} is not a regular file`, "krt cp copies one file at a time");
  }

  private async writeStdout(chunk: Uint8Array): Promise<void> {
    if (!this.context.stdout.write(chunk))
      await new Promise<void>((resolve) => this.context.stdout.once("drain", () => resolve()));
  }

  private async downloadTo(
    client: Parameters<typeof download>[0],
    t: Parameters<typeof download>[1],
    path: string,
  ): Promise<void> {
    let dest = this.destination;
    const local = await fsStat(dest).catch(() => undefined);
    if (local?.isDirectory()) dest = `${dest.replace(/\/+$/, "")}/${basename(path)}`;
    const tmp = `${dest}.krt-${process.pid}.part`;
    const out = createWriteStream(tmp);
    try {
      const info = await download(client, t, path, (c) =>
        out.write(c) ? undefined : new Promise<void>((resolve) => out.once("drain", () => resolve())),
      );
      await new Promise<void>((resolve, reject) =>
        out.end((e?: Error | null) => (e ? reject(e) : resolve())),
      );
      await rename(tmp, dest);
      this.context.stderr.write(`${t.run}:${path} → ${dest} (${info?.size ?? 0n} bytes)\n`);
    } catch (e) {
      out.destroy();
      await unlink(tmp).catch(() => {});
      throw e;
    }
  }
}
