import { ambientCredentialsAllowed, parseAmbientCredentialsProjects } from './ambient-credentials';
import { loadConfig } from './config';

const A = '0b5a3a4e-8f1c-4d0e-9a53-2f6c1d7e8b90';
const B = '7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';

describe(parseAmbientCredentialsProjects.name, () => {
  it('is empty when unset or blank: no project uses the operator credentials by default', () => {
    expect(loadConfig({}).ASK_AMBIENT_CREDENTIALS_PROJECTS).toEqual([]);
    expect(parseAmbientCredentialsProjects(' , ')).toEqual([]);
  });

  it('reads ids separated by commas or spaces, lower-cased, once each', () => {
    expect(
      loadConfig({ ASK_AMBIENT_CREDENTIALS_PROJECTS: `${A.toUpperCase()}, ${B} ${A}` })
        .ASK_AMBIENT_CREDENTIALS_PROJECTS,
    ).toEqual([A, B]);
  });

  it.each(['*', 'all', 'my-project', `${A}x`])('refuses %j at boot (there is no wildcard)', (entry) => {
    expect(() => loadConfig({ ASK_AMBIENT_CREDENTIALS_PROJECTS: entry })).toThrow(
      /ASK_AMBIENT_CREDENTIALS_PROJECTS: .* is not a project id \(a UUID\); there is no wildcard/,
    );
  });
});

describe(ambientCredentialsAllowed.name, () => {
  it('is true only for a listed project', () => {
    const config = loadConfig({ ASK_AMBIENT_CREDENTIALS_PROJECTS: A });
    expect([
      ambientCredentialsAllowed(config, A),
      ambientCredentialsAllowed(config, A.toUpperCase()),
      ambientCredentialsAllowed(config, B),
    ]).toEqual([true, true, false]);
    expect(ambientCredentialsAllowed(loadConfig({}), A)).toBe(false);
  });
});
