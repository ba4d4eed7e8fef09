import { encode } from 'gpt-tokenizer';

const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/**
 * Token count with gpt-tokenizer (o200k_base). Special-token look-alikes such as
 * "<|endoftext|>" in user content are counted as ordinary text: by default the library
 * throws on them, which would turn a harmless message into a 500.
 */
export function countTokens(text: string): number {
  return encode(text, NO_SPECIAL_TOKENS).length;
}
