import { createContext, useContext } from "react";

// English and French. The language is the one chosen with the switch, else French when the browser's preferred
// language is French (as ASSISTANT_LANG decides it for the CLI: a value starting with "fr"), else English.

export type Lang = "en" | "fr";

const en = {
  skip: "Skip to content",
  tabs: "Tabs",
  status: "Status",
  daemon: "Daemon",
  up: "up",
  unreachable: "not reachable",
  model: "Embedded model",
  running: "Running tasks",
  approvals: "Pending approvals",
  theme: "Theme",
  themeSystem: "system",
  themeLight: "light",
  themeDark: "dark",
  language: "Language",
  signInTitle: "Sign in to your assistant",
  signInBody: "This page needs a session. In a terminal on this computer, run:",
  signInAfter:
    "It opens this page signed in with a one-time link (valid 120 s, usable once). The page never asks for your API token.",
  unreachableTitle: "The daemon is not reachable",
  unreachableBody: "Start it with `assistant start`, then reload this page.",
  notBuiltTitle: "not built yet",
  notBuiltBody:
    "This tab is not built yet in the web UI. Its data is reachable today from the command line (`assistant --help`).",
  newSession: "New session",
  message: "Message",
  send: "Send",
  you: "You",
  assistant: "Assistant",
  thinking: "…",
  chatEmpty: "Ask anything. Answers stream here; Enter sends, Shift+Enter adds a line.",
  session: "Session",
  noSession: "new",
  failed: "Failed",
};

export type Messages = typeof en;

const fr: Messages = {
  skip: "Aller au contenu",
  tabs: "Onglets",
  status: "État",
  daemon: "Démon",
  up: "actif",
  unreachable: "injoignable",
  model: "Modèle embarqué",
  running: "Tâches en cours",
  approvals: "Approbations en attente",
  theme: "Thème",
  themeSystem: "système",
  themeLight: "clair",
  themeDark: "sombre",
  language: "Langue",
  signInTitle: "Connectez-vous à votre assistant",
  signInBody: "Cette page a besoin d'une session. Dans un terminal de cet ordinateur, lancez :",
  signInAfter:
    "La commande ouvre cette page connectée par un lien à usage unique (valable 120 s). La page ne demande jamais votre jeton d'API.",
  unreachableTitle: "Le démon est injoignable",
  unreachableBody: "Démarrez-le avec `assistant start`, puis rechargez cette page.",
  notBuiltTitle: "pas encore construit",
  notBuiltBody:
    "Cet onglet n'est pas encore construit dans l'interface web. Ses données sont accessibles dès aujourd'hui en ligne de commande (`assistant --help`).",
  newSession: "Nouvelle session",
  message: "Message",
  send: "Envoyer",
  you: "Vous",
  assistant: "Assistant",
  thinking: "…",
  chatEmpty:
    "Demandez ce que vous voulez. Les réponses s'affichent au fil de l'eau ; Entrée envoie, Maj+Entrée ajoute une ligne.",
  session: "Session",
  noSession: "nouvelle",
  failed: "Échec",
};

export const MESSAGES: Record<Lang, Messages> = { en, fr };

/** The stored choice, else French for a browser that prefers French, else English. */
export function initialLang(stored: string | null, preferred: readonly string[]): Lang {
  if (stored === "en" || stored === "fr") return stored;
  return preferred[0]?.toLowerCase().startsWith("fr") ? "fr" : "en";
}

export const MessagesContext = createContext<Messages>(en);

export function useMessages(): Messages {
  return useContext(MessagesContext);
}
