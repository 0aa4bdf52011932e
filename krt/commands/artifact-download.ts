/**
 * `krt artifact download <run> <name> [-o path]`: fetches one artifact through the store's
 * maintainer with the caller's own bearer token — the maintainer serves it only to identities
 * allowed to `get` the Run (TokenReview + SubjectAccessReview; docs/concepts/artifacts.md). The
 * reference (size, digest) is read from the Run with the caller's own permissions; the bytes are
 * written to `<path>.partial`, checked against both, and renamed into place only when they match.
 */

import { readFileSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { ARTIFACTS_FINALIZER, Labels, maintainerName } from "@kruntimes/api";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import type { GlobalOptions } from "../options.ts";
import { getRun } from "../runs/fetch.ts";

/** The maintainer's download port (controller/artifacts/maintainer-objects.ts). */
const MAINTAINER_PORT = 8090;

export class ArtifactDownloadCommand extends KrtCommand {
  static override paths = [["artifact", "download"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "Download one artifact of a Run, verifying its size and sha256 digest",
    details: `
      The download goes through the artifact store's maintainer (a Deployment the controller runs per store) and needs only permission to \`get\` the Run: krt sends the bearer token of your kubeconfig and the maintainer checks it with a TokenReview and a SubjectAccessReview. Kubeconfigs that authenticate with client certificates have no token to send; use one with a token (e.g. \`kubectl create token\`).

      The maintainer is addressed as \`http://krt-artifacts-<store>.<namespace>.svc:${MAINTAINER_PORT}\` (in-cluster DNS); from outside the cluster pass \`--endpoint\` (or \`$KRT_ARTIFACTS_ENDPOINT\`) with the address your administrator exposes it at.

      For this command \`-o\` is the file to write (default: the artifact's name, plus \`.tar.gz\` for a directory). A size or digest mismatch removes the partial file and exits ${ExitCode.Invalid}.
    `,
    examples: [
      ["Download a report", "krt artifact download build-x7k2p report.txt -o /tmp/report.txt"],
      ["Download a directory artifact", "krt artifact download build-x7k2p out   # writes out.tar.gz"],
    ],
  });

  runName = Option.String({ name: "run" });
  artifactName = Option.String({ name: "name" });
  endpoint = Option.String("--endpoint", {
    description: "Maintainer base URL (default: in-cluster Service DNS)",
  });
  private outPath: string | undefined;

  override async execute(): Promise<number> {
    // `-o` here is the destination file, not an output format.
    this.outPath = this.output;
    this.output = undefined;
    return super.execute();
  }

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, conn, namespace } = this.connect(opts);
    const run = await getRun(client, namespace, this.runName);
    const ref = run.status?.artifactRefs?.find((r) => r.name === this.artifactName);
    if (!ref)
      throw new CliError(
        ExitCode.NotFound,
        `run ${this.runName} has no artifact ${JSON.stringify(this.artifactName)}`,
        `see \`krt artifact list ${this.runName}\``,
      );
    const storeId = run.metadata.labels?.[Labels.artifactStore];
    if (!storeId || !run.metadata.finalizers?.includes(ARTIFACTS_FINALIZER))
      throw new CliError(ExitCode.NotFound, `run ${this.runName} names no artifact store to download from`);
    const token = conn.token ?? (conn.tokenFile ? readFileSync(conn.tokenFile, "utf8").trim() : undefined);
    if (!token)
      throw CliError.usage(
        "your kubeconfig authenticates without a bearer token, which the artifact maintainer needs to check your access",
        "use a kubeconfig user with a token (e.g. from `kubectl create token <serviceaccount>`)",
      );
    const base =
      this.endpoint ??
      this.context.env.KRT_ARTIFACTS_ENDPOINT ??
      `http://${maintainerName(storeId)}.${namespace}.svc:${MAINTAINER_PORT}`;
    const url = `${base.replace(/\/+$/, "")}/v1/runs/${encodeURIComponent(this.runName)}/artifacts/${encodeURIComponent(ref.name)}`;
    let res: Response;
    try {
      res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    } catch (e) {
      throw new CliError(
        ExitCode.Unavailable,
        `cannot reach the artifact maintainer at ${base}: ${e instanceof Error ? e.message : e}`,
        "from outside the cluster pass --endpoint (or $KRT_ARTIFACTS_ENDPOINT) with the maintainer's address",
      );
    }
    if (!res.ok) {
      const body = await res.text();
      let msg = body;
      try {
        msg = (JSON.parse(body) as { error?: string }).error ?? body;
      } catch {}
      const code =
        res.status === 401 || res.status === 403
          ? ExitCode.Forbidden
          : res.status === 404 || res.status === 410
            ? ExitCode.NotFound
            : ExitCode.Unavailable;
      throw new CliError(code, `download refused (${res.status}): ${msg}`);
    }
    const dest = this.outPath ?? (ref.type === "archive" ? `${ref.name}.tar.gz` : ref.name);
    const partial = `${dest}.partial`;
    const hash = new Bun.CryptoHasher("sha256");
    let size = 0;
    const out = Bun.file(partial).writer();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        hash.update(chunk);
        size += chunk.byteLength;
        out.write(chunk);
      }
      await out.end();
    } catch (e) {
      await Promise.resolve(out.end()).catch(() => undefined);
      await rm(partial, { force: true });
      throw new CliError(ExitCode.Unavailable, `download interrupted: ${e instanceof Error ? e.message : e}`);
    }
    const digest = `sha256:${hash.digest("hex")}`;
    const problems: string[] = [];
    if (ref.size !== undefined && size !== ref.size)
      problems.push(`${size} bytes, the Run records ${ref.size}`);
    if (ref.digest && digest !== ref.digest) problems.push(`digest ${digest}, the Run records ${ref.digest}`);
    if (problems.length) {
      await rm(partial, { force: true });
      throw new CliError(
        ExitCode.Invalid,
        `artifact ${ref.name} failed verification: ${problems.join("; ")} — nothing was written`,
        "the stored object was changed or corrupted after the Run recorded it",
      );
    }
    await rename(partial, dest);
    this.context.stderr.write(`${dest}: ${size} bytes, ${digest} verified\n`);
    return undefined;
  }
}
