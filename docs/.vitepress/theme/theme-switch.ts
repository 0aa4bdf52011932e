/** Light / Dark / System: a radio group in the nav bar. "System" follows the OS setting live. */
import { defineComponent, h, onBeforeUnmount, onMounted, ref } from "vue";
import { DARK_QUERY, isDark, MODES, type Mode, parseMode, STORAGE_KEY } from "./theme-mode.ts";

const LABELS: Record<Mode, string> = { light: "Light", dark: "Dark", system: "System" };

export const ThemeSwitch = defineComponent({
  name: "ThemeSwitch",
  setup() {
    const mode = ref<Mode>("system");
    let query: MediaQueryList | undefined;

    const apply = () => {
      const root = document.documentElement;
      root.classList.toggle("dark", isDark(mode.value, query?.matches ?? false));
      root.dataset.theme = mode.value;
    };
    const choose = (next: Mode) => {
      mode.value = next;
      localStorage.setItem(STORAGE_KEY, next);
      apply();
    };
    const onSystemChange = () => {
      if (mode.value === "system") apply();
    };

    onMounted(() => {
      query = window.matchMedia(DARK_QUERY);
      query.addEventListener("change", onSystemChange);
      mode.value = parseMode(localStorage.getItem(STORAGE_KEY));
      apply();
    });
    onBeforeUnmount(() => query?.removeEventListener("change", onSystemChange));

    return () =>
      h(
        "div",
        { class: "krt-theme-switch", role: "radiogroup", "aria-label": "Colour theme" },
        MODES.map((m) =>
          h(
            "button",
            {
              type: "button",
              role: "radio",
              "aria-checked": String(mode.value === m),
              class: { active: mode.value === m },
              "data-mode": m,
              title: `${LABELS[m]} theme`,
              onClick: () => choose(m),
            },
            LABELS[m],
          ),
        ),
      );
  },
});
