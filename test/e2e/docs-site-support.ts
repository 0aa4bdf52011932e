/**
 * The docs site for the browser tests: built by VitePress into docs/.vitepress/dist, served on
 * loopback by a small static server with the status codes a static host gives (404 for a missing
 * page), and headless Chromium from Debian driven through playwright-core.
 */
import { existsSync, statSync } from "node:fs";
import { join, normalize } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { runProcess } from "../support/process.ts";

export const ROOT = join(import.meta.dir, "..", "..");
export const DIST = join(ROOT, "docs", ".vitepress", "dist");
export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_MISSING =
  "Chromium is missing: install it with `KRT_NEED_CHROMIUM=1 bash scripts/setup.sh` (scripts/test.sh does)";

/** `vitepress build`; throws with its output (dead links, syntax errors) when it fails. */
export async function buildSite(): Promise<void> {
  const { code, stdout, stderr } = await runProcess(["bun", "run", "--cwd", "docs", "build"], { cwd: ROOT });
  if (code !== 0) throw new Error(`docs build failed (exit ${code}):\n${stdout}\n${stderr}`);
}

/** Serves DIST like a static host: `/x` and `/x.html` are the same page, `/d/` is `d/index.html`. */
export function serveSite(): { origin: string; stop(): void } {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = decodeURIComponent(new URL(req.url).pathname);
      for (const candidate of [path, `${path}.html`, join(path, "index.html")]) {
        const file = normalize(join(DIST, candidate));
        if (!file.startsWith(DIST)) break;
        if (existsSync(file) && statSync(file).isFile()) return new Response(Bun.file(file));
      }
      return new Response(Bun.file(join(DIST, "404.html")), {
        status: 404,
        headers: { "content-type": "text/html" },
      });
    },
  });
  return { origin: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}

/** The ```sh blocks of a Markdown page, in order, with whether a `quickstart-test: skip` comment precedes them. */
export function shellBlocks(markdown: string): { code: string; skip: boolean }[] {
  const out: { code: string; skip: boolean }[] = [];
  const re = /(<!--\s*quickstart-test:\s*skip[^>]*-->\s*\n)?```sh\n([\s\S]*?)```/g;
  for (const m of markdown.matchAll(re)) out.push({ code: (m[2] ?? "").trimEnd(), skip: m[1] !== undefined });
  return out;
}
