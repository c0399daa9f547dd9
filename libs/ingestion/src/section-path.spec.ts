import { chunkSectionPaths, markdownHeadings, MAX_SECTION_CHARS, sectionPathAt } from './section-path';

describe('markdownHeadings', () => {
  it('finds ATX headings outside fenced code, with their line offsets, levels and clean text', () => {
    const text =
      '# Storage\nintro\n```\n# not a heading\n```\n## Configuring `retention`\n### [Flags](flags.md) ##\n####\n';
    expect(markdownHeadings(text)).toEqual([
      { offset: 0, level: 1, text: 'Storage' },
      { offset: 40, level: 2, text: 'Configuring retention' },
      { offset: 67, level: 3, text: 'Flags' },
    ]);
  });
});

describe('sectionPathAt', () => {
  const headings = [
    { offset: 0, level: 1, text: 'Storage' },
    { offset: 10, level: 2, text: 'Local' },
    { offset: 20, level: 3, text: 'Retention' },
    { offset: 30, level: 2, text: 'Remote' },
  ];

  it.each([
    [0, 'Storage'],
    [15, 'Storage > Local'],
    [20, 'Storage > Local > Retention'],
    [29, 'Storage > Local > Retention'],
    [31, 'Storage > Remote'],
  ])('at offset %i: %s', (offset, path) => {
    expect(sectionPathAt(headings, offset)).toBe(path);
  });

  it('is null before the first heading, and keeps the innermost headings within 300 characters', () => {
    expect(sectionPathAt([{ offset: 5, level: 1, text: 'Late' }], 0)).toBeNull();
    const long = [
      { offset: 0, level: 1, text: 'a'.repeat(200) },
      { offset: 1, level: 2, text: 'b'.repeat(150) },
      { offset: 2, level: 3, text: 'c' },
    ];
    expect(sectionPathAt(long, 2)).toBe(`${'b'.repeat(150)} > c`);
    expect(sectionPathAt([{ offset: 0, level: 1, text: 'd'.repeat(400) }], 0)).toBe('d'.repeat(MAX_SECTION_CHARS));
  });
});

describe('chunkSectionPaths', () => {
  it('gives each chunk the trail of headings where it starts, overlapping chunks included', () => {
    const text = '# Storage\n\nBlocks.\n\n## Configuring retention\n\nKeep blocks 15 days.\n\nMore.';
    expect(
      chunkSectionPaths(text, [
        '# Storage\n\nBlocks.',
        'Blocks.\n\n## Configuring retention',
        '## Configuring retention\n\nKeep',
        'More.',
      ]),
    ).toEqual(['Storage', 'Storage', 'Storage > Configuring retention', 'Storage > Configuring retention']);
    expect(chunkSectionPaths('plain text', ['plain text', 'missing'])).toEqual([null, null]);
  });
});
