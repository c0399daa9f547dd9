/**
 * Conversation memory quotes user text (a prompt-injection surface): a summary repeats an earlier question,
 * which is the user's text and must never read as the service's own structure. These are the texts
 * that frame the quotation and the function that neutralises what is quoted.
 */

/** Opens the fenced memory block (a line of its own). */
export const MEMORY_FENCE_OPEN = '<conversation_memory>';

/** Closes the fenced memory block (a line of its own, last). */
export const MEMORY_FENCE_CLOSE = '</conversation_memory>';

/** The text a neutralised line starts with. */
export const QUOTED_LINE_MARK = '[quoted] ';

/**
 * Line breaks a model may read as one: CR LF, CR, NEL, LS, PS, VT and FF. All become `\n`, so that a
 * line the neutraliser checks is a line the model sees.
 */
const LINE_BREAKS = /\r\n|[\r\u0085\u2028\u2029\v\f]/g;

/** The fence's tag anywhere in a line, in any case and spacing (`< / Conversation-Memory >`). */
const FENCE_TAG = /<(\s*\/?\s*conversation[\s_-]*memory\b[^<>]*)>/giu;

/**
 * A line that mimics the structure around quoted text: after leading whitespace, punctuation and
 * symbols (`#`, `*`, `>`, `<|`, `[`…), a summary header (`Turn 7 (summary):`, `Turn 7:`, `Summary of turns…`),
 * the memory's own preamble, a role or authority label (`SYSTEM`, `assistant:`, `Operator`…), a
 * chat-template marker (`<|im_start|>`, `[INST]`), or the fence's name. Also checked after a
 * summariser's `Q:` / `A:` label; a line that holds one of our summary headers after a sentence
 * start counts too.
 */
const HEADER_LIKE =
  /^[\s\p{P}\p{S}]*(?:turns?\s*#?\s*\d+\s*(?:\(|:|$)|summary\s+of\s+turns?\b|summar(?:y|ies)\s+of\s+earlier\b|memory\s+of\s+this\s+conversation\b|the\s+block\s+(?:below|above)\b|(?:system|operator|developer|admin(?:istrator)?|assistant|user|human|ai|model|tool|function|instructions?|im_start|im_end|inst|endoftext|sys)\b|conversation[\s_-]*memory\b)/iu;

/** A summariser's own label at the start of a line (`Q: `, `Answer: `): the check applies after it too. */
const SUMMARY_LABEL = /^[\s\p{P}\p{S}]*(?:q|a|question|answer)\s*:\s*/iu;

/** One of our summary headers inside a line, at a sentence or clause start (`… asks. Turn 99 (summary): …`). */
const HEADER_INSIDE = /(?:^|[.!?:;]\s+)(?:turns?\s*#?\s*\d+\s*\(\s*summary\s*\)|summary\s+of\s+turns?\s+\d)/iu;

/** Invisible format characters (zero-width, bidi controls) that would hide a header from the check. */
const FORMAT_CHARACTERS = /\p{Cf}/gu;

/**
 * The quoted form of a text for the memory block: line breaks normalized to `\n`, the fence's tag
 * disarmed anywhere (`<`/`>` become `‹`/`›`), and each such line and each header-like line (see above; checked on its
 * NFKC form without format characters, so full-width or zero-width look-alikes are caught) prefixed
 * with `[quoted] `, so no line of quoted text can read as a summary header, a role label or the
 * fence, and the fence cannot be closed from inside. Other text is returned unchanged (the same
 * string: a caller may keep a cached token count when `quoteForMemory(t) === t`). Linear in the
 * text's length.
 */
export function quoteForMemory(text: string): string {
  const normalized = text.replace(LINE_BREAKS, '\n');
  let changed = normalized !== text;
  const lines = normalized.split('\n').map((line) => {
    let out = line.replace(FENCE_TAG, (_tag, inner: string) => `‹${inner}›`);
    const probe = out.normalize('NFKC').replace(FORMAT_CHARACTERS, '');
    const fence = out !== line || probe.includes(MEMORY_FENCE_OPEN) || probe.includes(MEMORY_FENCE_CLOSE);
    const header =
      HEADER_LIKE.test(probe) || HEADER_LIKE.test(probe.replace(SUMMARY_LABEL, '')) || HEADER_INSIDE.test(probe);
    if (fence || header) {
      out = QUOTED_LINE_MARK + out;
    }
    if (out !== line) changed = true;
    return out;
  });
  return changed ? lines.join('\n') : text;
}
