import { getEncoding } from 'js-tiktoken';
import { TiktokenCounter } from './tiktoken-counter';

describe(TiktokenCounter.name, () => {
  const o200k = new TiktokenCounter('o200k_base');
  const cl100k = new TiktokenCounter('cl100k_base');

  it('has the ids the cache stores and is exact', () => {
    expect(o200k.id).toBe('tiktoken:o200k_base');
    expect(cl100k.id).toBe('tiktoken:cl100k_base');
    expect(o200k.exact).toBe(true);
  });

  describe('countText', () => {
    it.each([
      // "hello world" is 2 tokens in both; "tiktoken is great!" is 6 in cl100k_base (OpenAI cookbook).
      ['hello world', 2, 2],
      ['tiktoken is great!', 6, 6],
      ['', 0, 0],
      ['1234567890', 4, 4],
      ['😀', 1, 2],
      ['Hello, world! 你好，世界！', 9, 12],
      // special-token strings in message content are plain text, as the API treats them
      ['<|endoftext|>', 7, 7],
    ])('counts %j as %i (o200k_base) and %i (cl100k_base)', (text, o, c) => {
      expect(o200k.countText(text)).toBe(o);
      expect(cl100k.countText(text)).toBe(c);
    });

    it('equals js-tiktoken full build (getEncoding) on mixed text', () => {
      const text =
        'Die Würde des Menschen ist unantastbar. 人人生而自由。 مرحبا 🙂 https://example.com/?q=1 0xDEADBEEF';
      expect(o200k.countText(text)).toBe(getEncoding('o200k_base').encode(text).length);
      expect(cl100k.countText(text)).toBe(getEncoding('cl100k_base').encode(text).length);
    });
  });

  describe('countMessages', () => {
    it('adds 3 per message, 1 for the role, and 3 for the reply priming (OpenAI cookbook)', () => {
      const messages = [
        { role: 'system' as const, content: 'You are a helpful assistant.' },
        { role: 'user' as const, content: 'hello world' },
      ];
      // "You are a helpful assistant." = 6 tokens, "hello world" = 2
      expect(o200k.countText(messages[0].content)).toBe(6);
      expect(o200k.countMessages(messages)).toBe(6 + 4 + 2 + 4 + 3);
    });

    it('counts an empty request as the reply priming alone', () => {
      expect(o200k.countMessages([])).toBe(3);
    });
  });
});
