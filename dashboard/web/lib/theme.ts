/** Light, dark or the system's: a preference kept in localStorage (not a secret), applied to <html>. */
import { effect, signal } from "@preact/signals";

export type Theme = "light" | "dark" | "system";
const KEY = "kruntimes.dashboard.theme";

const stored = localStorage.getItem(KEY);
export const theme = signal<Theme>(stored === "light" || stored === "dark" ? stored : "system");

const media = matchMedia("(prefers-color-scheme: dark)");
const apply = () => {
  const t = theme.value;
  document.documentElement.dataset.theme = t === "system" ? (media.matches ? "dark" : "light") : t;
};
media.addEventListener("change", apply);
effect(() => {
  localStorage.setItem(KEY, theme.value);
  apply();
});
