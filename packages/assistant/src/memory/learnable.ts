// Whether a user message may hold something worth remembering, decided without a model call, so a batch of
// small talk ("thanks!", "what time is it in Tokyo?", "write a haiku about rain") costs no extraction. It is
// conservative: a first-person word, a memory verb, a possible name or a long message means "maybe", and only
// then does the model read the batch. English and French.

/** Words that say the person talks about themselves, their people, or asks to be remembered. */
const CUES = new Set([
  // English
  "i",
  "i'm",
  "i've",
  "i'd",
  "i'll",
  "im",
  "ive",
  "me",
  "my",
  "mine",
  "myself",
  "we",
  "we're",
  "we've",
  "we'll",
  "us",
  "our",
  "ours",
  "ourselves",
  "remember",
  "remind",
  "forget",
  "note",
  "prefer",
  "favourite",
  "favorite",
  // French (j' and m' are matched as prefixes below)
  "je",
  "moi",
  "mon",
  "ma",
  "mes",
  "nous",
  "notre",
  "nos",
  "souviens",
  "rappelle",
  "retiens",
  "oublie",
  "préfère",
  "prefere",
]);

/** Capitalised words that commonly open a sentence without naming anyone. */
const OPENERS = new Set(
  (
    "what what's whats how how's why when where who whom whose which can could would will shall should is are am " +
    "was were do does did has have please thanks thank hello hi hey ok okay yes yeah no nope sure great good nice " +
    "cool fine perfect awesome tell write explain show give make list translate summarise summarize find help " +
    "describe compare convert calculate check create draft suggest let the a an this that these those it it's " +
    "there here now then so and but or if also again bonjour bonsoir salut coucou merci oui non d'accord " +
    "quel quelle quels quelles comment pourquoi quand où ou qui que quoi peux pouvez peut est-ce est c'est " +
    "le la les un une des ce cette ces donne écris ecris explique fais traduis résume resume trouve aide " +
    "bonne bon super génial genial parfait très tres et mais alors"
  ).split(" "),
);

/** Longer messages are left to the model: they may state things these cues do not catch. */
const LONG_MESSAGE_WORDS = 40;

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu;

/** False only for messages that surely hold nothing durable about the person; true when in doubt. */
export function mayTeach(message: string): boolean {
  const words = [...message.matchAll(WORD)];
  if (words.length === 0) return false;
  if (words.length > LONG_MESSAGE_WORDS) return true;
  let previousEnd = 0;
  for (const match of words) {
    const word = match[0].replaceAll("’", "'");
    const lower = word.toLowerCase();
    if (CUES.has(lower) || /^[jm]'/.test(lower)) return true;
    const sentenceStart = previousEnd === 0 || /[.!?:\n]/.test(message.slice(previousEnd, match.index));
    previousEnd = match.index + match[0].length;
    // A capital inside a sentence, or opening it on a word that is not a common opener, may be a name.
    if (word[0] !== lower[0] && (!sentenceStart || !OPENERS.has(lower))) return true;
  }
  return false;
}
