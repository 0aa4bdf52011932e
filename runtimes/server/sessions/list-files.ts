/**
 * ListFiles: one page of a directory, entries ordered by the bytes of their names, resuming
 * after the last name of the previous page (so entries added or removed between pages neither
 * repeat nor shift the rest). Entries are described with lstat: a symlink is listed as itself.
 */
import { type BigIntStats, closeSync, lstatSync } from "node:fs";
import type { FileInfo } from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { SessionLimits } from "../../../api/src/constants.ts";
import type { DirListings } from "./dir-listing.ts";
import { firstAfter } from "./dir-listing.ts";
import { toFileInfo } from "./file-info.ts";
import type { PageTokens } from "./page-token.ts";
import { errnoOf, fsError } from "./session-error.ts";
import { at, normalizePath, type Workspace } from "./workspace-path.ts";

export interface ListContext {
  workspace: Workspace;
  session: string;
  tokens: PageTokens;
  listings: DirListings;
}

export interface ListPage {
  entries: FileInfo[];
  nextPageToken: string;
}

/** Page size: 0 is the default; more than the maximum is the maximum. */
export function pageSize(limit: number): number {
  if (limit === 0) return SessionLimits.defaultListLimit;
  return Math.min(limit, SessionLimits.maxListLimit);
}

export function listFiles(ctx: ListContext, path: string, limit: number, pageToken: string): ListPage {
  const dir = normalizePath(path);
  const after = pageToken === "" ? undefined : ctx.tokens.decode(pageToken, ctx.session, dir);
  const size = pageSize(limit);
  const { fd } = ctx.workspace.openDirectory(path);
  try {
    const names = ctx.listings.names(fd);
    const prefix = Buffer.from(`${at(fd)}/`);
    const entries: FileInfo[] = [];
    let i = after === undefined ? 0 : firstAfter(names, after);
    let last: Buffer | undefined;
    for (; i < names.length && entries.length < size; i++) {
      const name = names[i] as Buffer;
      const full = Buffer.concat([prefix, name]);
      let stat: BigIntStats;
      try {
        stat = lstatSync(full, { bigint: true });
      } catch (error) {
        if (errnoOf(error) === "ENOENT") continue; // removed since the directory was read
        throw error;
      }
      const text = name.toString("utf8");
      entries.push(toFileInfo(dir === "" ? text : `${dir}/${text}`, stat, full));
      last = name;
    }
    const more = i < names.length && last !== undefined;
    return { entries, nextPageToken: more ? ctx.tokens.encode(ctx.session, dir, last as Buffer) : "" };
  } catch (error) {
    throw fsError(error, dir);
  } finally {
    closeSync(fd);
  }
}
