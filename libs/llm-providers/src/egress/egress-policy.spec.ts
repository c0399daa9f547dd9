import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { refusedName, refusedRange } from './address-ranges';
import { EgressPolicy, EgressRefusedError, findEgressRefusal } from './egress-policy';

const FIELD = 'llm.baseUrl';

describe('refusedRange', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['192.0.0.192', 'reserved'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::7f00:1', 'IPv4-compatible IPv6'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
    ['not-an-ip', 'not an IP address'],
  ])('refuses %s (%s)', (address, range) => {
    expect(refusedRange(address)).toBe(range);
  });

  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'allows the public address %s',
    (address) => {
      expect(refusedRange(address)).toBeUndefined();
    },
  );
});

describe('refusedName', () => {
  it.each([
    ['localhost', 'localhost name'],
    ['LOCALHOST.', 'localhost name'],
    ['api.localhost', 'localhost name'],
    ['metadata.google.internal', 'private-use name'],
    ['printer.local', 'private-use name'],
    ['router.home.arpa', 'private-use name'],
    ['redis', 'single-label name'],
  ])('refuses %s (%s)', (name, reason) => {
    expect(refusedName(name)).toBe(reason);
  });

  it('allows a public name', () => {
    expect(refusedName('api.openai.com')).toBeUndefined();
  });
});

describe(EgressPolicy.name, () => {
  describe('checkUrl', () => {
    const policy = new EgressPolicy({
      allowList: [
        { origin: 'http://127.0.0.1:11434', pathPrefix: '' },
        { origin: 'https://llm.example.com', pathPrefix: '/v1' },
      ],
    });

    it.each([
      ['http://127.0.0.1:6379/', 'a loopback address'],
      ['http://2130706433/', 'a loopback address'],
      ['http://0x7f.0.0.1/', 'a loopback address'],
      ['http://0177.0.0.1/', 'a loopback address'],
      ['http://127.1/', 'a loopback address'],
      ['http://[::1]:5432', 'a loopback address'],
      ['http://[::ffff:127.0.0.1]/', 'a loopback address'],
      ['http://169.254.169.254/latest/meta-data/', 'a link-local address'],
      ['http://[fd00:ec2::254]/latest/meta-data/', 'a unique-local address'],
      ['http://100.64.0.1/', 'a carrier-grade NAT address'],
      ['http://0.0.0.0:8080/', 'an unspecified address'],
      ['http://localhost:8080/', 'a localhost name'],
      ['http://user:pass@10.0.0.1/', 'user-info'],
      ['https://api.example.com/v1#', 'fragment'],
      ['http://127.0.0.1:18787/m/internal#', 'fragment'],
      ['file:///etc/passwd', 'only http and https'],
      ['gopher://127.0.0.1:6379/_', 'only http and https'],
      ['not a url', 'not a valid URL'],
    ])('refuses %s', (url, reason) => {
      expect(() => policy.checkUrl(url, FIELD)).toThrow(EgressRefusedError);
      expect(() => policy.checkUrl(url, FIELD)).toThrow(new RegExp(`^${FIELD.replace('.', '\\.')}: .*${reason}`));
    });

    it('allows a public URL and an allow-listed internal one', () => {
      expect(policy.checkUrl('https://api.openai.com/v1', FIELD).hostname).toBe('api.openai.com');
      expect(policy.checkUrl('http://127.0.0.1:11434', FIELD).port).toBe('11434');
    });

    it('matches the allow-list by origin and path prefix', () => {
      expect(policy.isAllowListed('https://llm.example.com/v1')).toBe(true);
      expect(policy.isAllowListed('https://llm.example.com/v1/chat')).toBe(true);
      expect(policy.isAllowListed('https://llm.example.com/v10')).toBe(false);
      expect(policy.isAllowListed('https://llm.example.com:8443/v1')).toBe(false);
      expect(policy.isAllowListed('http://llm.example.com/v1')).toBe(false);
    });
  });

  describe('checkResolved', () => {
    it('refuses a name whose static address is loopback, and allows a public one', async () => {
      const policy = new EgressPolicy({
        staticHosts: [
          { host: 'rebind.example.com', addresses: ['93.184.215.14', '127.0.0.1'] },
          { host: 'public.example.com', addresses: ['93.184.215.14'] },
        ],
      });
      await expect(policy.checkResolved('https://rebind.example.com/v1', FIELD)).rejects.toThrow(
        /resolves to a loopback address/,
      );
      await expect(policy.checkResolved('https://public.example.com/v1', FIELD)).resolves.toBeInstanceOf(URL);
    });
  });

  describe('fetch', () => {
    let canary: Server;
    let connections = 0;
    let port = 0;
    beforeAll(async () => {
      canary = createServer((req, res) => {
        if (req.url === '/redirect') {
          res.writeHead(302, { location: `http://127.0.0.1:${port}/inside` }).end();
          return;
        }
        res.end('ok');
      });
      canary.on('connection', () => (connections += 1));
      await new Promise<void>((r) => canary.listen(0, '127.0.0.1', r));
      port = (canary.address() as AddressInfo).port;
    });
    afterAll(() => new Promise((r) => canary.close(r)));

    it('refuses a connection to a loopback IP and to a name resolving there, without connecting', async () => {
      const policy = new EgressPolicy({ staticHosts: [{ host: 'rebind.example.com', addresses: ['127.0.0.1'] }] });
      const before = connections;
      for (const url of [
        `http://127.0.0.1:${port}/`,
        `http://rebind.example.com:${port}/`,
        `http://localhost:${port}/`,
      ]) {
        const err = await policy
          .fetch(FIELD)(url)
          .catch((e: unknown) => e);
        expect(findEgressRefusal(err)).toMatchObject({ field: FIELD });
      }
      expect(connections).toBe(before);
      await policy.close();
    });

    it('reaches an allow-listed origin, and refuses a redirect from it (to a refused target) without following it', async () => {
      const policy = new EgressPolicy({
        allowList: [{ origin: `http://allowed.example.com:${port}`, pathPrefix: '' }],
        staticHosts: [{ host: 'allowed.example.com', addresses: ['127.0.0.1'] }],
      });
      const ok = await policy.fetch(FIELD)(`http://allowed.example.com:${port}/`);
      expect(await ok.text()).toBe('ok');
      const before = connections;
      const err = await policy
        .fetch(FIELD)(`http://allowed.example.com:${port}/redirect`)
        .catch((e: unknown) => e);
      expect(findEgressRefusal(err)?.message).toBe(
        `${FIELD}: the provider answered with a redirect (302), which is not followed`,
      );
      // The redirect's first hop reused the kept-alive socket or opened one; the refused hop opened none.
      expect(connections - before).toBeLessThanOrEqual(1);
      await policy.close();
    });
  });
});
