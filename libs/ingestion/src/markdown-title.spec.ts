import { markdownTitle } from './markdown-title';

describe(markdownTitle.name, () => {
  it.each([
    ['a `#` opening', '# Guards\n\nText.', 'Guards'],
    ['a `##` opening', 'Intro line\n\n## Custom providers\n\n### Later', 'Custom providers'],
    ['a `###` opening (the NestJS docs pages)', '### Pipes\n\nA pipe is a class.', 'Pipes'],
    ['closing hashes and up to three spaces of indent', '   ## Exception filters ##\n', 'Exception filters'],
    [
      'front-matter title, before any heading',
      '---\nlayout: page\ntitle: "Deploying to production"\n---\n# Other\n',
      'Deploying to production',
    ],
    ['front matter without a title: the first heading after it', '---\nlayout: page\n---\n## Overview\n', 'Overview'],
    [
      'a code fence hides its `#` comments',
      '```dockerfile\n# Use the official Node.js image as the base image\nFROM node:20\n```\n\n### Deployment\n',
      'Deployment',
    ],
    ['a tilde fence, closed only by a fence as long', '~~~~\n# not this\n~~~\n# nor this\n~~~~\n## Real\n', 'Real'],
    ['an HTML comment hides its headings', '<!--\n# hidden\n-->\n# Shown', 'Shown'],
    ['a setext heading', 'Commander.js\n============\n\ntext', 'Commander.js'],
    ['an HTML heading', '<p align="center">\n  <h1 align="center">Zod</h1>\n</p>', 'Zod'],
    [
      'markup cleaned: badges dropped, links kept as text',
      '# Prometheus client for node.js [![CI](https://x/badge.svg)](https://x) [`docs`](https://d)',
      'Prometheus client for node.js docs',
    ],
    [
      'a heading that is only a badge is skipped',
      '# [![npm](https://x.svg)](https://y)\n## Installation',
      'Installation',
    ],
  ])('%s', (_case, text, title) => {
    expect(markdownTitle(text)).toBe(title);
  });

  it.each([
    ['no heading at all', 'Just a paragraph.\n\nAnother one.'],
    ['headings only inside a code fence', '```sh\n# install\nnpm ci\n```\n'],
    ['a list item followed by a rule is not a setext heading', '- item\n---\n'],
    ['an empty document', ''],
  ])('returns null for %s', (_case, text) => {
    expect(markdownTitle(text)).toBeNull();
  });
});
