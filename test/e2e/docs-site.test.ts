/**
 * The documentation site in headless Chromium: it builds (VitePress fails on dead page links),
 * every page reachable from the home page loads and every internal link and anchor on it
 * resolves, a code block's copy button puts exactly the command on the clipboard, and the
 * Light / Dark / System switch changes the page and is remembered. Needs no cluster.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import {
  buildSite,
  CHROMIUM,
  CHROMIUM_MISSING,
  launchChromium,
  ROOT,
  serveSite,
  shellBlocks,
} from "./docs-site-support.ts";

if (!existsSync(CHROMIUM)) throw new Error(CHROMIUM_MISSING);

let site: { origin: string; stop(): void };
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  await buildSite();
  site = serveSite();
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: "light" });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: site.origin });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  site?.stop();
});

// Browser-side code is passed as text: this file is type-checked without the DOM library.
const backgroundOf = (page: Page) => page.evaluate<string>("getComputedStyle(document.body).backgroundColor");
const isDarkClass = (page: Page) =>
  page.evaluate<boolean>('document.documentElement.classList.contains("dark")');

/** Relative luminance of an `rgb(r, g, b)` colour, 0 (black) to 1 (white). */
function luminance(rgb: string): number {
  const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).map(Number) as [number, number, number];
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}

describe("docs site", () => {
  test("every page linked from the site loads, and every internal link and anchor resolves", async () => {
    const page = await context.newPage();
    const seen = new Set<string>();
    const queue = ["/"];
    const broken: string[] = [];
    const anchorsOf = new Map<string, Set<string>>();
    const wanted: { from: string; path: string; hash: string }[] = [];
    while (queue.length > 0) {
      const path = queue.shift() as string;
      if (seen.has(path)) continue;
      seen.add(path);
      const res = await page.goto(site.origin + path);
      if (res?.status() !== 200) {
        broken.push(`${path}: HTTP ${res?.status()}`);
        continue;
      }
      const found = await page.evaluate<{ ids: string[]; links: string[] }>(`({
        ids: [...document.querySelectorAll("[id]")].map((e) => e.id),
        links: [...document.querySelectorAll("a[href]")].map((a) => a.href),
      })`);
      anchorsOf.set(path, new Set(found.ids));
      for (const href of found.links) {
        const url = new URL(href);
        if (url.origin !== site.origin) continue;
        const target = url.pathname.replace(/\.html$/, "").replace(/\/index$/, "/") || "/";
        if (url.hash) wanted.push({ from: path, path: target, hash: decodeURIComponent(url.hash.slice(1)) });
        if (!seen.has(target)) queue.push(target);
      }
    }
    for (const w of wanted) {
      const ids = anchorsOf.get(w.path);
      if (ids && !ids.has(w.hash)) broken.push(`${w.from} -> ${w.path}#${w.hash}: no such anchor`);
    }
    expect(broken).toEqual([]);
    // Every page of the site was reached through links (none is orphaned).
    for (const p of [
      "/quickstart",
      "/overview",
      "/when-to-use",
      "/comparisons",
      "/install",
      "/operations",
      "/security",
    ])
      expect(seen).toContain(p);
    expect(seen.size).toBeGreaterThan(12);
    await page.close();
  }, 180_000);

  test("the home page renders its hero and features from the front matter", async () => {
    const page = await context.newPage();
    await page.goto(`${site.origin}/`);
    expect((await page.locator(".VPHero .name").textContent())?.trim()).toBe("kruntimes");
    expect(await page.locator(".VPHero .actions a").count()).toBe(3);
    expect(await page.locator(".VPFeature").count()).toBe(4);
    await page.close();
  });

  test("a copy button puts exactly the command on the clipboard", async () => {
    const page = await context.newPage();
    await page.goto(`${site.origin}/quickstart.html`);
    const expected = shellBlocks(readFileSync(join(ROOT, "docs/quickstart.md"), "utf8")).find((b) =>
      b.code.startsWith("helm install"),
    )?.code;
    expect(expected).toBeDefined();
    const block = page.locator('div[class*="language-sh"]', { hasText: "helm install" }).first();
    await block.hover();
    await block.locator("button.copy").click();
    const copied = await page.evaluate<string>("navigator.clipboard.readText()");
    expect(copied.trim()).toBe(expected as string);
    await page.close();
  });

  test("Light / Dark / System: the switch sets html.dark and the background, and is remembered", async () => {
    const page = await context.newPage();
    await page.emulateMedia({ colorScheme: "light" });
    await page.goto(`${site.origin}/overview.html`);
    const switchButton = (mode: string) =>
      page.locator(`.VPNavBar .krt-theme-switch button[data-mode="${mode}"]`);

    // Nothing stored: System, and the system is light.
    expect(await switchButton("system").getAttribute("aria-checked")).toBe("true");
    expect(await isDarkClass(page)).toBe(false);
    expect(luminance(await backgroundOf(page))).toBeGreaterThan(0.9);

    await switchButton("dark").click();
    expect(await isDarkClass(page)).toBe(true);
    expect(luminance(await backgroundOf(page))).toBeLessThan(0.2);
    expect(await switchButton("dark").getAttribute("aria-checked")).toBe("true");

    // Remembered across a reload, applied before the app mounts (no light flash).
    await page.reload();
    expect(await isDarkClass(page)).toBe(true);
    expect(await switchButton("dark").getAttribute("aria-checked")).toBe("true");

    // Light wins over a dark system.
    await page.emulateMedia({ colorScheme: "dark" });
    await switchButton("light").click();
    expect(await isDarkClass(page)).toBe(false);
    expect(luminance(await backgroundOf(page))).toBeGreaterThan(0.9);

    // System follows the OS setting, live.
    await switchButton("system").click();
    expect(await isDarkClass(page)).toBe(true);
    await page.emulateMedia({ colorScheme: "light" });
    await page.waitForFunction('!document.documentElement.classList.contains("dark")');
    expect(luminance(await backgroundOf(page))).toBeGreaterThan(0.9);
    expect(await page.evaluate(() => localStorage.getItem("krt-docs-theme"))).toBe("system");
    await page.close();
  });
});
