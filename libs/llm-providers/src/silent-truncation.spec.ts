import {
  detectSilentTruncation,
  SILENT_TRUNCATION_MIN_GAP,
  SILENT_TRUNCATION_RATIO,
  silentTruncationVerdict,
} from './silent-truncation';

describe('detectSilentTruncation', () => {
  it('flags a prompt count far below what was sent (Ollama keeping half of num_ctx)', () => {
    expect(detectSilentTruncation(9200, 2051)).toBe(true);
    expect(silentTruncationVerdict(9200, 2051)).toEqual({ truncated: true, ratio: 0.223, missingTokens: 7149 });
  });

  it('does not flag counts within the approximate counter’s error', () => {
    expect(silentTruncationVerdict(1000, 880)).toEqual({ truncated: false, ratio: 0.88, missingTokens: 120 });
    expect(detectSilentTruncation(1000, 1040)).toBe(false);
  });

  it('flags exactly below the ratio and from the minimum gap', () => {
    expect(SILENT_TRUNCATION_RATIO).toBe(0.75);
    expect(SILENT_TRUNCATION_MIN_GAP).toBe(32);
    expect(detectSilentTruncation(1000, 750)).toBe(false);
    expect(detectSilentTruncation(1000, 749)).toBe(true);
    expect(detectSilentTruncation(100, 60)).toBe(true);
    expect(detectSilentTruncation(40, 10)).toBe(false);
  });

  it('never flags a missing count', () => {
    expect(detectSilentTruncation(5000, null)).toBe(false);
    expect(silentTruncationVerdict(5000, null)).toEqual({ truncated: false, ratio: 1, missingTokens: 0 });
  });
});
