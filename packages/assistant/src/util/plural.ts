// Counts in messages for people: "1 model", "2 models", "0 matches".

/** `count` and the word, in the plural unless the count is 1; `many` for irregular plurals (entry -> entries). */
export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
}
