/**
 * The site's three colour modes — Light, Dark and System — kept in localStorage and applied as
 * the `dark` class on <html>, which VitePress's default theme styles. VitePress's own toggle is
 * two-way (light/dark), so the site turns it off (`appearance: false`) and uses this instead.
 */
export const MODES = ["light", "dark", "system"] as const;
export type Mode = (typeof MODES)[number];
export const STORAGE_KEY = "krt-docs-theme";
export const DARK_QUERY = "(prefers-color-scheme: dark)";

export function parseMode(stored: string | null): Mode {
  return (MODES as readonly string[]).includes(stored ?? "") ? (stored as Mode) : "system";
}

export function isDark(mode: Mode, systemDark: boolean): boolean {
  return mode === "system" ? systemDark : mode === "dark";
}

/**
 * Runs in <head> before the first paint, so a dark page never flashes light. It repeats
 * parseMode/isDark in plain ES5 because it is inlined as text.
 */
export const BOOT_SCRIPT = `(function(){try{var m=localStorage.getItem(${JSON.stringify(STORAGE_KEY)});
if(m!=="light"&&m!=="dark")m="system";var d=m==="system"?matchMedia(${JSON.stringify(DARK_QUERY)}).matches:m==="dark";
document.documentElement.classList.toggle("dark",d);document.documentElement.dataset.theme=m;}catch(e){}})();`;
