/** The default VitePress theme plus the Light/Dark/System switch in the nav bar. */
import type { Theme } from "vitepress";
import DefaultTheme from "vitepress/theme";
import { h } from "vue";
import { ThemeSwitch } from "./theme-switch.ts";
import "./custom.css";

export default {
  extends: DefaultTheme,
  Layout: () =>
    h(DefaultTheme.Layout, null, {
      "nav-bar-content-after": () => h(ThemeSwitch),
      "nav-screen-content-after": () => h(ThemeSwitch),
    }),
} satisfies Theme;
