// The page's own preferences (language, theme) in localStorage: never a credential.

export type Theme = "system" | "light" | "dark";

export function readPreference(name: string): string | null {
  try {
    return window.localStorage.getItem(`assistant.${name}`);
  } catch {
    return null; // storage disabled: the defaults apply
  }
}

export function writePreference(name: string, value: string): void {
  try {
    window.localStorage.setItem(`assistant.${name}`, value);
  } catch {
    // storage disabled: the choice lasts until the page is reloaded
  }
}

export function initialTheme(stored: string | null): Theme {
  return stored === "light" || stored === "dark" ? stored : "system";
}
