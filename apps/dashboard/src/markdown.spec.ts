import { markdownHtml } from './markdown';

describe(markdownHtml.name, () => {
  it('renders a fenced code block with its language class and inline code', () => {
    expect(markdownHtml('Run `CREATE EXTENSION`:\n\n```sql\nCREATE EXTENSION vector;\n```\n')).toBe(
      '<p>Run <code>CREATE EXTENSION</code>:</p>\n' +
        '<pre><code class="language-sql">CREATE EXTENSION vector;\n</code></pre>\n',
    );
  });

  it('shows raw HTML as text and an image as its alt text', () => {
    expect(markdownHtml('a <script>alert(1)</script> b\n\n![the logo](https://example.invalid/logo.png)')).toBe(
      '<p>a &#60;script&#62;alert(1)&#60;/script&#62; b</p>\n<p>the logo</p>\n',
    );
  });

  it('renders an unclosed fence (a streaming answer) as a code block to the end', () => {
    expect(markdownHtml('Try:\n\n```sql\nSELECT 1')).toBe(
      '<p>Try:</p>\n<pre><code class="language-sql">SELECT 1\n</code></pre>\n',
    );
  });
});
