/**
 * The first rule a chat request breaks, as the provider would name it: `param` is the path
 * of the offending field (`messages.3.content.0`, `messages[3].role`), `message` the text
 * of the 400 (Anthropic prefixes it with the path, as the real API does).
 */
export interface RequestIssue {
  param: string;
  message: string;
}

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export const isBlank = (text: string): boolean => text.trim() === '';
