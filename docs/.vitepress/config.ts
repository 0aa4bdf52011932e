/**
 * The kruntimes documentation site (VitePress). `bun run docs:dev` serves it with hot reload,
 * `bun run docs:build` writes static files to docs/.vitepress/dist; the build fails on dead
 * internal links. The browser test (test/e2e/docs-site.test.ts) builds and crawls it.
 */
import { defineConfig } from "vitepress";
import { repoLinks } from "./repo-links.ts";
import { sidebar } from "./sidebar.ts";
import { BOOT_SCRIPT } from "./theme/theme-mode.ts";

/** GitHub's heading ids, so `page.md#anchor` links work both on GitHub and on the site. */
export function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

export default defineConfig({
  title: "kruntimes",
  description: "A Kubernetes-native warm execution substrate: Runs on warm pods in milliseconds.",
  lang: "en-US",
  // The repository's docs/README.md describes the folder, not the product.
  srcExclude: ["README.md", "node_modules/**"],
  // Three-way Light/Dark/System switch instead of VitePress's two-way toggle (see theme/).
  appearance: false,
  head: [["script", {}, BOOT_SCRIPT]],
  markdown: {
    theme: { light: "github-light", dark: "github-dark" },
    config: (md) => {
      repoLinks(md);
      // Inline code is text, never a Vue template: workflow expressions (`${{ inputs.x }}`) would
      // otherwise be compiled as mustaches and fail the build.
      const inline = md.renderer.rules.code_inline;
      md.renderer.rules.code_inline = (tokens, idx, options, env, self) =>
        (inline ? inline(tokens, idx, options, env, self) : self.renderToken(tokens, idx, options)).replace(
          /^<code/,
          "<code v-pre",
        );
    },
    anchor: { slugify: githubSlug },
  },
  themeConfig: {
    nav: [
      { text: "Quickstart", link: "/quickstart" },
      { text: "Concepts", link: "/concepts/api" },
      { text: "API", link: "/api-reference" },
      { text: "Operations", link: "/operations" },
    ],
    sidebar: sidebar(),
    outline: [2, 3],
    search: { provider: "local" },
  },
});
