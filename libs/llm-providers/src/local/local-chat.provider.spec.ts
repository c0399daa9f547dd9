import { joinMemory, renderContextItem, renderSessionSummary, renderSummaryLine } from '@ask/context-budget';
import type { ChatMessage, TokenCounter } from '@ask/token-counting';
import {
  followUpLine,
  composeAnswer,
  letterShare,
  LocalChatProvider,
  parseUserMessage,
  questionParts,
  stem,
} from './local-chat.provider';
import { LocalSemanticEmbeddingProvider } from './local-semantic-embedding.provider';

/** Counts one token per whitespace-separated word and 1 per message: enough to check the usage wiring. */
const wordCounter: TokenCounter = {
  id: 'test:words',
  exact: true,
  perMessageTokens: 1,
  perRequestTokens: 0,
  countText: (t) => t.split(/\s+/).filter(Boolean).length,
  countMessages(ms) {
    return ms.reduce((n, m) => n + this.countText(m.content) + this.perMessageTokens, 0);
  },
};

const userMessage =
  renderContextItem(
    {
      kind: 'knowledge',
      title: 'HNSW indexes',
      score: 0.81,
      text: 'An HNSW index creates a multilayer graph. It has better query performance than IVFFlat but slower build times.',
    },
    0,
  ) +
  renderContextItem(
    {
      kind: 'knowledge',
      title: 'IVFFlat',
      score: 0.42,
      text: 'An IVFFlat index divides vectors into lists, and then searches a subset of those lists.\n\nLists are built with k-means.',
    },
    1,
  ) +
  'Which index has better query performance?';

/** A retrieval the relevance judgement finds relevant (ask-contracts `relevanceJudgement`). */
const RELEVANT = { evidence: 0.8, below: 0.46, nothingRelevant: false };

const streamed = async (provider: LocalChatProvider, content: string) => {
  let text = '';
  for await (const chunk of provider.streamChat({
    model: 'local',
    messages: [{ role: 'user', content }],
    maxTokens: 256,
  })) {
    if (chunk.type === 'delta') text += chunk.text;
  }
  return text;
};

describe(LocalChatProvider.name, () => {
  describe('parseUserMessage', () => {
    it('finds each [n] passage with its title and the question', () => {
      const { passages, question } = parseUserMessage(userMessage);
      expect(passages.map((p) => [p.index, p.title])).toEqual([
        [1, 'HNSW indexes'],
        [2, 'IVFFlat'],
      ]);
      expect(question).toBe('Which index has better query performance?');
    });
  });

  describe('composeAnswer', () => {
    it('quotes the best-matching sentence with its source', () => {
      const answer = composeAnswer([{ role: 'user', content: userMessage }], 1);
      expect(answer).toBe(
        [
          'From the retrieved context:',
          '- It has better query performance than IVFFlat but slower build times. [1: HNSW indexes]',
          'Sources: [1] HNSW indexes',
        ].join('\n'),
      );
    });

    it("prefers the sentence of the page whose title names the question's keywords, then the one holding them as a phrase", () => {
      // Real sentences of the PostgreSQL 15 manual (5.4 Constraints; 11.8 Partial Indexes; PostgreSQL
      // Licence). Each holds "index" and one other keyword of the question; without the title and
      // phrase rules the Constraints sentence wins on the rarer "good".
      const content =
        renderContextItem(
          {
            kind: 'knowledge',
            title: '5.4. Constraints',
            score: 0.5,
            text: 'Since a DELETE of a row from the referenced table will require a scan of the referencing table, it is often a good idea to index the referencing columns too.',
          },
          0,
        ) +
        renderContextItem(
          {
            kind: 'knowledge',
            title: '11.8. Partial Indexes',
            score: 0.4,
            text: 'A partial index is an index built over a subset of a table. As a result, parameterized query clauses do not work with a partial index.',
          },
          1,
        ) +
        'How does a partial index work, and what is it good for?';
      expect(composeAnswer([{ role: 'user', content }], 2)).toBe(
        [
          'From the retrieved context:',
          '- A partial index is an index built over a subset of a table. [2: 11.8. Partial Indexes]',
          '- As a result, parameterized query clauses do not work with a partial index. [2: 11.8. Partial Indexes]',
          'Sources: [2] 11.8. Partial Indexes',
        ].join('\n'),
      );
    });

    it('carries the list a sentence introduces, its items not quoted on their own', () => {
      // Real text of the PostgreSQL 15 manual (20.10 Automatic Vacuuming; 25.1.1 Vacuuming Basics).
      const content =
        renderContextItem(
          {
            kind: 'knowledge',
            title: '20.10. Automatic Vacuuming',
            score: 0.22,
            text: 'In each round the daemon examines the database and issues `VACUUM` and `ANALYZE` commands as needed for tables in that database.',
          },
          0,
        ) +
        renderContextItem(
          {
            kind: 'knowledge',
            title: '25.1. Routine Vacuuming',
            score: 0.21,
            text: "### 25.1.1. Vacuuming Basics\n\nPostgreSQL's `VACUUM` command has to process each table on a regular basis for several reasons:\n\n- To recover or reuse disk space occupied by updated or deleted rows.\n\n- To update data statistics used by the PostgreSQL query planner.\n\nEach of these reasons dictates performing `VACUUM` operations of varying frequency and scope.",
          },
          1,
        ) +
        'What does the VACUUM command do and why is it needed?';
      expect(composeAnswer([{ role: 'user', content }], 2)).toBe(
        [
          'From the retrieved context:',
          '- In each round the daemon examines the database and issues `VACUUM` and `ANALYZE` commands as needed for tables in that database. [1: 20.10. Automatic Vacuuming]',
          "- PostgreSQL's `VACUUM` command has to process each table on a regular basis for several reasons: [2: 25.1. Routine Vacuuming]",
          '  - To recover or reuse disk space occupied by updated or deleted rows.',
          '  - To update data statistics used by the PostgreSQL query planner.',
          'Sources: [1] 20.10. Automatic Vacuuming; [2] 25.1. Routine Vacuuming',
        ].join('\n'),
      );
    });

    it("quotes the sentence explaining a quoted one with it, leaves out the weak ones, and prefers the definition of the question's subject", () => {
      // Real sentences of the PostgreSQL 15 manual (13.1 Introduction; 73.7 Heap-Only Tuples; SET TRANSACTION).
      const content =
        renderContextItem(
          {
            kind: 'knowledge',
            title: 'SET TRANSACTION',
            score: 0.3,
            text: 'See Chapter 13 for more information about transaction isolation and concurrency control.',
          },
          0,
        ) +
        renderContextItem(
          {
            kind: 'knowledge',
            title: '13.1. Introduction',
            score: 0.25,
            text: 'Internally, data consistency is maintained by using a multiversion model (Multiversion Concurrency Control, MVCC). This means that each SQL statement sees a snapshot of data (a database version) as it was some time ago. Locks are acquired for some operations.',
          },
          1,
        ) +
        renderContextItem(
          {
            kind: 'knowledge',
            title: '12.9. Preferred Index Types for Text Search',
            score: 0.2,
            text: 'GIN indexes are the preferred text search index type. Multicolumn GIN indexes are implemented by building a single B-tree over composite values (column number, key value).',
          },
          2,
        ) +
        'How does multiversion concurrency control (MVCC) provide transaction isolation?';
      expect(composeAnswer([{ role: 'user', content }], 4)).toBe(
        [
          'From the retrieved context:',
          '- See Chapter 13 for more information about transaction isolation and concurrency control. [1: SET TRANSACTION]',
          '- Internally, data consistency is maintained by using a multiversion model (Multiversion Concurrency Control, MVCC). This means that each SQL statement sees a snapshot of data (a database version) as it was some time ago. [2: 13.1. Introduction]',
          'Sources: [1] SET TRANSACTION; [2] 13.1. Introduction',
        ].join('\n'),
      );
      const gin =
        renderContextItem(
          {
            kind: 'knowledge',
            title: '12.9. Preferred Index Types for Text Search',
            score: 0.2,
            text: 'Multicolumn GIN indexes are implemented by building a single B-tree over composite values (column number, key value). GIN indexes are the preferred text search index type.',
          },
          0,
        ) + 'What is a GIN index?';
      expect(composeAnswer([{ role: 'user', content: gin }], 1).split('\n')[1]).toBe(
        '- GIN indexes are the preferred text search index type. [1: 12.9. Preferred Index Types for Text Search]',
      );
    });

    it("carries a table's rows under the sentence naming it, and skips headings and front matter", () => {
      // Real text of the PostgreSQL 15 manual (13.2 Transaction Isolation), cut where its chunk ends.
      const content =
        renderContextItem(
          {
            kind: 'knowledge',
            title: '13.2. Transaction Isolation',
            score: 0.3,
            text: '---\ntitle: Isolation levels of transactions\n---\n### 13.2.1. Read Committed Isolation Level\n\nThe SQL standard and PostgreSQL-implemented transaction isolation levels are described in Table 13.1.\n\nTable 13.1. Transaction Isolation Levels\n\nIsolation Level  |  Dirty Read  |  Nonrepeatable Read\n\nRead uncommitted  |  Allowed, but not in PG  |  Possible\n\nRead committed  |  Not possible  |  Possible',
          },
          0,
        ) + 'Which transaction isolation levels are there?';
      expect(composeAnswer([{ role: 'user', content }], 4)).toBe(
        [
          'From the retrieved context:',
          '- The SQL standard and PostgreSQL-implemented transaction isolation levels are described in Table 13.1. [1: 13.2. Transaction Isolation]',
          '  - Isolation Level | Dirty Read | Nonrepeatable Read',
          '  - Read uncommitted | Allowed, but not in PG | Possible',
          '  - Read committed | Not possible | Possible',
          'Sources: [1] 13.2. Transaction Isolation',
        ].join('\n'),
      );
    });

    it('reads a chunk cut inside code at both ends by which side is prose, and matches a word joining two of the question', () => {
      // Bare fences (the manual writes no language): the chunk opens and ends inside code, so its fence
      // count is even and only the prose tells which parts are code.
      const content =
        renderContextItem(
          {
            kind: 'knowledge',
            title: '14.1. Using EXPLAIN',
            score: 0.3,
            text: " Filter: (f1 @> '((0.5,2))'::polygon)\n Planning time: 0.040 ms\n```\nThe planner thinks (quite correctly) that this sample table is too small to bother with an index scan, so we have a plain sequential scan in which all the rows got rejected by the filter condition. But if we force an index scan to be used, we see:\n\n```\nSET enable_seqscan TO off;",
          },
          0,
        ) +
        renderContextItem(
          {
            kind: 'knowledge',
            title: 'pg_basebackup',
            score: 0.2,
            text: 'pg_basebackup is used to take a base backup of a running PostgreSQL database cluster.',
          },
          1,
        ) +
        'Why would the planner choose a sequential scan over an index scan, and how do I take a base backup?';
      expect(composeAnswer([{ role: 'user', content }], 4)).toBe(
        [
          'From the retrieved context:',
          '- pg_basebackup is used to take a base backup of a running PostgreSQL database cluster. [2: pg_basebackup]',
          '- The planner thinks (quite correctly) that this sample table is too small to bother with an index scan, so we have a plain sequential scan in which all the rows got rejected by the filter condition. [1: 14.1. Using EXPLAIN]',
          'Sources: [2] pg_basebackup; [1] 14.1. Using EXPLAIN',
        ].join('\n'),
      );
    });

    it("completes a table cut by a chunk boundary from the page's next retrieved chunk", () => {
      // Real text of the PostgreSQL 15 manual (13.2 Transaction Isolation): its chunk ends after two rows
      // of Table 13.1, the next chunk opens with the rows they share (overlap) and the other two.
      const cut =
        'The SQL standard and PostgreSQL-implemented transaction isolation levels are described in Table 13.1.\n\nTable 13.1. Transaction Isolation Levels\n\nIsolation Level  |  Dirty Read  |  Serialization Anomaly\n\nRead uncommitted  |  Allowed, but not in PG  |  Possible\n\nRead committed  |  Not possible  |  Possible\n\n';
      const next =
        "Read committed  |  Not possible  |  Possible\n\nRepeatable read  |  Not possible  |  Possible\n\nSerializable  |  Not possible  |  Not possible\n\nIn PostgreSQL, you can request any of the four standard transaction isolation levels, but internally only three distinct isolation levels are implemented, i.e., PostgreSQL's Read Uncommitted mode behaves like Read Committed.";
      const title = '13.2. Transaction Isolation';
      const content =
        renderContextItem({ kind: 'knowledge', title, score: 0.3, text: next }, 0) +
        renderContextItem({ kind: 'knowledge', title, score: 0.2, text: cut }, 1) +
        'Which transaction isolation levels does PostgreSQL offer?';
      expect(composeAnswer([{ role: 'user', content }], 1)).toBe(
        [
          'From the retrieved context:',
          '- The SQL standard and PostgreSQL-implemented transaction isolation levels are described in Table 13.1. [2: 13.2. Transaction Isolation]',
          '  - Isolation Level | Dirty Read | Serialization Anomaly',
          '  - Read uncommitted | Allowed, but not in PG | Possible',
          '  - Read committed | Not possible | Possible',
          '  - Repeatable read | Not possible | Possible',
          '  - Serializable | Not possible | Not possible',
          'Sources: [2] 13.2. Transaction Isolation',
        ].join('\n'),
      );
    });

    it('answers a how-to part with the sentence introducing its code, and reads "Table 9.46" as no topic word', () => {
      // Real sentences of the PostgreSQL 15 manual (11.2 Index Types, 8.14 JSON Types, pg_basebackup).
      const content =
        renderContextItem(
          {
            kind: 'knowledge',
            title: '8.14. JSON Types',
            score: 0.3,
            text: '(For details of the semantics that these operators implement, see Table 9.46.) An example of creating an index with this operator class is:\n\n```\nCREATE INDEX idxgin ON api USING GIN (jdoc);\n```',
          },
          0,
        ) +
        renderContextItem(
          {
            kind: 'knowledge',
            title: '11.2. Index Types',
            score: 0.3,
            text: 'PostgreSQL provides several index types: B-tree, Hash, GiST, SP-GiST, GIN, BRIN, and the extension bloom. For example, to create a Hash index:\n\n```\nCREATE INDEX name ON table USING HASH (column);\n```',
          },
          1,
        ) +
        'How do I create an index on a table and list the index types PostgreSQL supports?';
      expect(composeAnswer([{ role: 'user', content }], 2)).toBe(
        [
          'From the retrieved context:',
          '- PostgreSQL provides several index types: B-tree, Hash, GiST, SP-GiST, GIN, BRIN, and the extension bloom. [2: 11.2. Index Types]',
          '- For example, to create a Hash index: [2: 11.2. Index Types]',
          '  ```',
          '  CREATE INDEX name ON table USING HASH (column);',
          '  ```',
          'Sources: [2] 11.2. Index Types',
        ].join('\n'),
      );
    });

    it('answers "why" with the sentence giving the reasons', () => {
      // Real text of the PostgreSQL 15 manual (20.10 Automatic Vacuuming, 25.1 Routine Vacuuming).
      const content =
        renderContextItem(
          {
            kind: 'knowledge',
            title: '20.10. Automatic Vacuuming',
            score: 0.3,
            text: 'In each round the daemon examines the database and issues `VACUUM` and `ANALYZE` commands as needed for tables in that database.',
          },
          0,
        ) +
        renderContextItem(
          {
            kind: 'knowledge',
            title: '25.1. Routine Vacuuming',
            score: 0.3,
            text: "PostgreSQL's `VACUUM` command has to process each table on a regular basis for several reasons:\n\n1. To recover or reuse disk space occupied by updated or deleted rows.\n2. To update data statistics used by the PostgreSQL query planner.",
          },
          1,
        ) +
        'What does the VACUUM command do and why is it needed?';
      expect(composeAnswer([{ role: 'user', content }], 4)).toBe(
        [
          'From the retrieved context:',
          "- PostgreSQL's `VACUUM` command has to process each table on a regular basis for several reasons: [2: 25.1. Routine Vacuuming]",
          '  - To recover or reuse disk space occupied by updated or deleted rows.',
          '  - To update data statistics used by the PostgreSQL query planner.',
          '- In each round the daemon examines the database and issues `VACUUM` and `ANALYZE` commands as needed for tables in that database. [1: 20.10. Automatic Vacuuming]',
          'Sources: [2] 25.1. Routine Vacuuming; [1] 20.10. Automatic Vacuuming',
        ].join('\n'),
      );
    });

    it('never reads a fence naming a language as a closing one', () => {
      // Real text of the bullmq README ("The gist"), cut inside its last code block: seven fences, the
      // first bare (an opening one that names no language), so the fence count alone reads it wrongly.
      const text =
        "# The gist\n\nInstall:\n\n```\n$ yarn add bullmq\n```\n\nAdd jobs to the queue:\n\n```ts\nimport { Queue } from 'bullmq';\n\nconst queue = new Queue('Paint');\n\nqueue.add('cars', { color: 'blue' });\n```\n\nProcess the jobs in your workers:\n\n```ts\nimport { Worker } from 'bullmq';\n\nconst worker = new Worker('Paint', async job => {\n  if (job.name === 'cars') {\n    await paintCar(job.data.color);\n  }\n});\n```\n\nListen to jobs for completion:\n\n```ts\nimport { QueueEvents } from 'bullmq';\n\nconst queueEvents = new QueueEvents('Paint');";
      const content =
        renderContextItem({ kind: 'knowledge', title: 'bullmq README', score: 0.3, text }, 0) +
        'How do I add jobs to the queue?';
      expect(composeAnswer([{ role: 'user', content }], 1)).toBe(
        [
          'From the retrieved context:',
          '- Add jobs to the queue: [1: bullmq README]',
          '  ```ts',
          "  import { Queue } from 'bullmq';",
          '  ',
          "  const queue = new Queue('Paint');",
          '  ',
          "  queue.add('cars', { color: 'blue' });",
          '  ```',
          'Sources: [1] bullmq README',
        ].join('\n'),
      );
    });

    it("drops the passage's own list markers from a quoted sentence", () => {
      const content =
        renderContextItem(
          {
            kind: 'knowledge',
            title: 'CHANGELOG',
            score: 0.5,
            text: '- Added support for parallel index builds for HNSW indexes',
          },
          0,
        ) + 'Which index builds run in parallel?';
      expect(composeAnswer([{ role: 'user', content }], 1).split('\n')[1]).toBe(
        '- Added support for parallel index builds for HNSW indexes [1: CHANGELOG]',
      );
    });

    it('quotes the code block a sentence introduces, and drops link lists and badges', () => {
      const content =
        renderContextItem(
          {
            kind: 'knowledge',
            title: 'bullmq README',
            score: 0.31,
            text: "[![npm](https://x/badge.svg)](https://x) [Docs](https://d) · [Guide](https://g) · [API](https://a)\n\nAdd jobs to the queue:\n\n```ts\nconst queue = new Queue('Paint');\nqueue.add('cars', { color: 'blue' });\n```",
          },
          0,
        ) + 'How do I add jobs to a queue?';
      expect(composeAnswer([{ role: 'user', content }], 4, RELEVANT)).toBe(
        [
          'From the retrieved context:',
          '- Add jobs to the queue: [1: bullmq README]',
          '  ```ts',
          "  const queue = new Queue('Paint');",
          "  queue.add('cars', { color: 'blue' });",
          '  ```',
          'Sources: [1] bullmq README',
        ].join('\n'),
      );
    });

    it('abstains when the judgement says nothing relevant, listing the nearest sources with their scores', () => {
      const content =
        renderContextItem(
          {
            kind: 'knowledge',
            title: 'class-validator README',
            score: 0.161,
            text: 'Validation decorators check each property of a class.',
          },
          0,
        ) +
        renderContextItem(
          { kind: 'knowledge', title: 'class-validator README', score: 0.15, text: 'Whitelisting strips properties.' },
          1,
        ) +
        renderContextItem(
          { kind: 'knowledge', title: 'ioredis README', score: 0.149, text: 'A Redis client for Node.js.' },
          2,
        ) +
        renderContextItem({ kind: 'knowledge', title: 'zod README', score: 0.12, text: 'Zod validates schemas.' }, 3) +
        renderContextItem({ kind: 'knowledge', title: 'pg README', score: 0.1, text: 'A PostgreSQL client.' }, 4) +
        'How do I bake sourdough bread at home?';
      const messages: ChatMessage[] = [
        { role: 'user', content: 'What is pgvector?' },
        { role: 'assistant', content: 'An extension.' },
        { role: 'user', content },
      ];
      expect(composeAnswer(messages, 4, { evidence: 0.31, below: 0.46, nothingRelevant: true })).toBe(
        [
          '(Follow-up; this prompt carried 1 earlier turn.)',
          "The knowledge base does not seem to cover this question: the best match holds 0.31 of the question's weighted terms, below 0.46.",
          'Nearest sources: [1] class-validator README (0.16); [3] ioredis README (0.15); [4] zod README (0.12)',
        ].join('\n'),
      );
    });

    it('abstains when no retrieved sentence shares a keyword with the question, even when the judgement finds relevance', () => {
      const content =
        renderContextItem(
          {
            kind: 'knowledge',
            title: 'prom-client README',
            score: 0.23,
            text: 'Counters only go up and reset when the process restarts.',
          },
          0,
        ) + 'How do I tune the Java virtual machine?';
      expect(composeAnswer([{ role: 'user', content }], 4, RELEVANT)).toBe(
        [
          'The knowledge base does not seem to cover this question: no retrieved passage shares a keyword with it.',
          'Nearest sources: [1] prom-client README (0.23)',
        ].join('\n'),
      );
    });

    it('answers when the judgement finds relevance, and says so when nothing was retrieved', () => {
      const at =
        renderContextItem(
          { kind: 'knowledge', title: 'HNSW indexes', score: 0.18, text: 'An HNSW index creates a multilayer graph.' },
          0,
        ) + 'What does an HNSW index create?';
      expect(composeAnswer([{ role: 'user', content: at }], 4, RELEVANT).split('\n')[0]).toBe(
        'From the retrieved context:',
      );
      expect(
        composeAnswer([{ role: 'user', content: 'What is a GIN index?' }], 4, {
          evidence: null,
          below: 0.46,
          nothingRelevant: true,
        }),
      ).toBe('The knowledge base does not seem to cover this question: nothing was retrieved.');
    });

    it('says how many earlier turns the prompt carried', () => {
      const messages: ChatMessage[] = [
        { role: 'system', content: 'Answer from context.' },
        { role: 'user', content: 'What is pgvector?' },
        { role: 'assistant', content: 'An extension.' },
        { role: 'user', content: userMessage },
      ];
      expect(composeAnswer(messages, 1).split('\n')[0]).toBe('(Follow-up; this prompt carried 1 earlier turn.)');
    });
  });

  describe('streamChat with a semantic embedder', () => {
    // A paraphrase: the question shares no keyword with the sentence that answers it.
    const paraphrase =
      renderContextItem(
        {
          kind: 'knowledge',
          title: 'Routine vacuuming',
          score: 0.52,
          text: 'The autovacuum daemon removes dead row versions in the background. The planner estimates costs from table statistics.',
        },
        0,
      ) +
      renderContextItem(
        {
          kind: 'knowledge',
          title: 'Backups',
          score: 0.41,
          text: 'A base backup copies the whole data directory while the server runs.',
        },
        1,
      ) +
      renderContextItem(
        {
          kind: 'knowledge',
          title: 'Indexes',
          score: 0.33,
          text: 'An index lets the server find rows without reading the whole table.',
        },
        2,
      ) +
      'How can I duplicate my database so I can restore it later?';

    it('quotes the sentence closest in meaning, where keyword matching finds none and abstains', async () => {
      const semantic = new LocalChatProvider({
        counter: wordCounter,
        sentenceEmbedder: new LocalSemanticEmbeddingProvider(),
        relevance: RELEVANT,
        maxPassages: 1,
      });
      expect(await streamed(semantic, paraphrase)).toBe(
        [
          'From the retrieved context:',
          '- A base backup copies the whole data directory while the server runs. [2: Backups]',
          'Sources: [2] Backups',
        ].join('\n'),
      );
      const lexical = new LocalChatProvider({ counter: wordCounter, relevance: RELEVANT, maxPassages: 1 });
      expect((await streamed(lexical, paraphrase)).split('\n')[0]).toBe(
        'The knowledge base does not seem to cover this question: no retrieved passage shares a keyword with it.',
      );
    }, 60_000);

    it('abstains on the judgement with the nearest sources, without embedding anything', async () => {
      const embedded: string[][] = [];
      const sentenceEmbedder = { embed: async (texts: string[]) => (embedded.push(texts), texts.map(() => [1])) };
      const below = paraphrase
        .replace('score 0.52', 'score 0.29')
        .replace('score 0.41', 'score 0.12')
        .replace('score 0.33', 'score 0.1');
      const provider = new LocalChatProvider({
        counter: wordCounter,
        sentenceEmbedder,
        relevance: { evidence: 0.2, below: 0.46, nothingRelevant: true },
      });
      expect(await streamed(provider, below)).toBe(
        [
          "The knowledge base does not seem to cover this question: the best match holds 0.20 of the question's weighted terms, below 0.46.",
          'Nearest sources: [1] Routine vacuuming (0.29); [2] Backups (0.12); [3] Indexes (0.10)',
        ].join('\n'),
      );
      expect(embedded).toEqual([]);
    });
  });

  describe('streamChat', () => {
    it('streams the abstain answer when the judgement says nothing relevant', async () => {
      const provider = new LocalChatProvider({
        counter: wordCounter,
        relevance: { evidence: 0.1, below: 0.46, nothingRelevant: true },
      });
      let text = '';
      for await (const chunk of provider.streamChat({
        model: 'local',
        messages: [{ role: 'user', content: userMessage }],
        maxTokens: 256,
      })) {
        if (chunk.type === 'delta') text += chunk.text;
      }
      expect(text).toBe(
        "The knowledge base does not seem to cover this question: the best match holds 0.10 of the question's weighted terms, below 0.46.\nNearest sources: [1] HNSW indexes (0.81); [2] IVFFlat (0.42)",
      );
    });

    it('streams the answer in several deltas, then usage from the counter', async () => {
      const provider = new LocalChatProvider({ counter: wordCounter, wordsPerChunk: 3 });
      const messages: ChatMessage[] = [{ role: 'user', content: userMessage }];
      const deltas: string[] = [];
      let usage: unknown;
      for await (const chunk of provider.streamChat({ model: 'local', messages, maxTokens: 256 })) {
        if (chunk.type === 'delta') deltas.push(chunk.text);
        else usage = chunk;
      }
      const answer = composeAnswer(messages, 3);
      expect(deltas.length).toBeGreaterThan(3);
      expect(deltas.join('')).toBe(answer);
      const promptTokens = wordCounter.countMessages(messages);
      const completionTokens = wordCounter.countText(answer);
      expect(usage).toEqual({
        type: 'usage',
        promptTokens,
        completionTokens,
        raw: { promptTokens, completionTokens },
        convention: 'local',
        model: 'local',
        finishReason: 'stop',
      });
    });

    it('stops with an AbortError when the signal aborts', async () => {
      const provider = new LocalChatProvider({ counter: wordCounter, chunkDelayMs: 20 });
      const controller = new AbortController();
      const stream = provider.streamChat({
        model: 'local',
        messages: [{ role: 'user', content: userMessage }],
        maxTokens: 64,
        signal: controller.signal,
      });
      const it = stream[Symbol.asyncIterator]();
      await it.next();
      controller.abort();
      await expect(it.next()).rejects.toMatchObject({ name: 'AbortError' });
    });
  });

  describe('questionParts', () => {
    it.each([
      [
        'How do I create an index on a table, and which index types does PostgreSQL support?',
        ['How do I create an index on a table', 'which index types does PostgreSQL support?'],
      ],
      [
        'What does the VACUUM command do and why is it needed?',
        ['What does the VACUUM command do', 'why is it needed?'],
      ],
      ['How do I take a base backup and restore it?', ['How do I take a base backup and restore it?']],
      [
        'How do I take a base backup and restore it with point-in-time recovery?',
        ['How do I take a base backup', 'restore it with point-in-time recovery?'],
      ],
      [
        'How do I connect to Redis with ioredis, giving a host, port and password?',
        ['How do I connect to Redis with ioredis, giving a host, port and password?'],
      ],
    ])('splits %j before its second question word, or a how-to question between its two steps', (question, parts) => {
      expect(questionParts(question)).toEqual(parts);
    });
  });

  describe('stem', () => {
    it.each([
      ['indexes', 'index'],
      ['index', 'index'],
      ['deciding', 'decid'],
      ['decide', 'decid'],
      ['queries', 'query'],
      ['jobs', 'job'],
      ['needed', 'need'],
      ['process', 'process'],
      ['free', 'free'],
    ])('%s → %s', (word, stemmed) => {
      expect(stem(word)).toBe(stemmed);
    });
  });

  describe('letterShare', () => {
    // The figure of matching the whole text with /[\p{L}\s]/gu (code points) over its UTF-16 length.
    const byRegex = (text: string) => (text.match(/[\p{L}\s]/gu)?.length ?? 0) / text.length;
    it.each([
      'Add jobs to the queue with queue.add(name, data).',
      'const x = await q.add("a", { b: 1 }); // 42',
      '\t\v\f\r\n  |---|---|',
      'Größe: naïve café — ½ ² ₃',
      'Японский 日本語の文章。한국어 문장 ١٢٣',
      '😀 emoji 𝒜𝒷 math letters 𝟙',
      'lone \ud800 high and \udc00 low surrogates',
      '\u00a0no-break\u3000ideographic\u2028line\ufeffbom',
    ])('equals the regex count over the length for %j', (text) => {
      expect(letterShare(text)).toBe(byRegex(text));
    });
  });
});

describe(followUpLine.name, () => {
  it('counts the turns inside the memory block from its part headers, not as one turn', () => {
    const memory = joinMemory([
      renderSessionSummary(4, 'The user runs PostgreSQL 15.'),
      renderSummaryLine(5, 'Asked about HNSW.'),
      renderSummaryLine(6, 'Asked about IVFFlat.'),
    ]);
    expect(followUpLine([memory, 'What is pgvector?', 'And its operators?'])).toBe(
      '(Follow-up; this prompt carried 2 earlier turns verbatim, 2 as summaries, turns 1–4 in a session summary.)',
    );
    expect(followUpLine([joinMemory([renderSummaryLine(1, 'Asked about HNSW.')])])).toBe(
      '(Follow-up; this prompt carried 0 earlier turns verbatim, 1 as a summary.)',
    );
  });

  it('keeps the plain count without memory and says nothing on a first turn', () => {
    expect(followUpLine(['What is pgvector?'])).toBe('(Follow-up; this prompt carried 1 earlier turn.)');
    expect(followUpLine([])).toBeNull();
  });
});
