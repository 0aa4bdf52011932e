/**
 * Links from a docs page to files outside docs/ (source files, other READMEs) work when the
 * Markdown is read in the repository but have no page on the site. This markdown-it rule turns
 * them into plain text marked with the repository path, instead of links that would 404; links
 * between pages are left to VitePress, whose dead-link check still fails the build on them.
 */
import { posix } from "node:path";
import type { MarkdownRenderer } from "vitepress";

type Token = ReturnType<MarkdownRenderer["parseInline"]>[number];

/** The repository path a relative link points to when it leaves docs/, else undefined. */
export function outsideDocs(page: string, href: string): string | undefined {
  if (/^([a-z][a-z0-9+.-]*:|#|\/)/i.test(href)) return undefined;
  const target = posix.normalize(posix.join("docs", posix.dirname(page), href.split("#")[0] ?? ""));
  return target.startsWith("docs/") ? undefined : target;
}

function closingIndex(tokens: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.type === "link_open") depth++;
    if (t.type === "link_close" && --depth === 0) return i;
  }
  return -1;
}

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

export function repoLinks(md: MarkdownRenderer): void {
  md.core.ruler.push("krt-repo-links", (state) => {
    const page = (state.env as { relativePath?: string }).relativePath;
    if (!page) return;
    for (const block of state.tokens) {
      const kids = block.children;
      if (block.type !== "inline" || !kids) continue;
      for (let i = 0; i < kids.length; i++) {
        const open = kids[i] as Token;
        if (open.type !== "link_open") continue;
        const target = outsideDocs(page, open.attrGet("href") ?? "");
        const end = closingIndex(kids, i);
        if (!target || end < 0) continue;
        const close = kids[end] as Token;
        open.type = "html_inline";
        open.content = `<span class="krt-repo-path" title="${escapeHtml(`in the repository: ${target}`)}">`;
        close.type = "html_inline";
        close.content = "</span>";
      }
    }
  });
}
