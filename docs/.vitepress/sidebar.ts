/**
 * Navigation of the docs site. Pages written in parallel by other work may not exist yet: an
 * entry whose file is missing is left out, so the sidebar never links to a page that is not built.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { DefaultTheme } from "vitepress";

const DOCS = join(import.meta.dirname, "..");

type Item = { text: string; link: string };

const SECTIONS: { text: string; items: Item[] }[] = [
  {
    text: "Introduction",
    items: [
      { text: "Overview", link: "/overview" },
      { text: "When to use it", link: "/when-to-use" },
      { text: "Comparisons", link: "/comparisons" },
      { text: "Quickstart", link: "/quickstart" },
    ],
  },
  {
    text: "Concepts",
    items: [
      { text: "The API", link: "/concepts/api" },
      { text: "Runtimes", link: "/concepts/runtimes" },
      { text: "Runs", link: "/concepts/runs" },
      { text: "Functions", link: "/concepts/functions" },
      { text: "Writing function handlers", link: "/concepts/functions-handlers" },
      { text: "Sessions", link: "/concepts/sessions" },
      { text: "Sessions: the security boundary", link: "/concepts/sessions-security" },
      { text: "The gateway", link: "/concepts/gateway" },
      { text: "Scheduling", link: "/concepts/scheduling" },
      { text: "Run affinity", link: "/concepts/affinity" },
      { text: "Persistent workspaces", link: "/concepts/workspaces" },
      { text: "Artifacts", link: "/concepts/artifacts" },
      { text: "Workflows", link: "/concepts/workflows" },
    ],
  },
  {
    text: "Clients",
    items: [
      { text: "Go SDK", link: "/sdk/go" },
      { text: "Python SDK", link: "/sdk/python" },
      { text: "MCP server (krt mcp)", link: "/mcp" },
      { text: "Dashboard", link: "/dashboard" },
      { text: "Examples", link: "/examples" },
    ],
  },
  {
    text: "Guides",
    items: [
      { text: "Install", link: "/install" },
      { text: "Releases and verifying them", link: "/release" },
      { text: "Compatibility and versions", link: "/compatibility" },
      { text: "Operations", link: "/operations" },
      { text: "Security and threat model", link: "/security" },
      { text: "Custom runtimes", link: "/runtime-server" },
      { text: "Benchmarks", link: "/benchmarks" },
    ],
  },
  {
    text: "Reference",
    items: [
      { text: "API reference", link: "/api-reference" },
      { text: "The krt CLI", link: "/cli" },
      { text: "CLI reference", link: "/cli-reference" },
      { text: "Helm chart values", link: "/install#values" },
    ],
  },
  {
    text: "Development",
    items: [
      { text: "The local cluster", link: "/local-cluster" },
      { text: "The local node agent", link: "/local-cluster-node-agent" },
    ],
  },
];

export function pageExists(link: string): boolean {
  const page = link.split("#")[0] as string;
  return existsSync(join(DOCS, `${page}.md`));
}

export function sidebar(): DefaultTheme.SidebarItem[] {
  return SECTIONS.map((s) => ({ text: s.text, items: s.items.filter((i) => pageExists(i.link)) })).filter(
    (s) => s.items.length > 0,
  );
}
